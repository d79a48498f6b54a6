package io.estuary.master.slots;

import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.DiskStatus;
import io.estuary.common.protocol.LocationRole;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerInfo;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * Spreads partitions evenly: partition i goes to worker (start + i) mod n, and within a worker the partitions it
 * gets rotate over its healthy disks. The start moves on with every shuffle, so many small shuffles do not all
 * pile their first partitions onto the first worker.
 */
public final class RoundRobinSlotAllocator implements SlotAllocator {
    private final int maxWorkersPerApp;
    private final ReplicaPlacer replicas;
    private int nextStart;

    public RoundRobinSlotAllocator() {
        this(Integer.MAX_VALUE, Collections.emptyMap());
    }

    public RoundRobinSlotAllocator(int maxWorkersPerApp, Map<String, String> rackOfHost) {
        this.maxWorkersPerApp = maxWorkersPerApp;
        this.replicas = new ReplicaPlacer(rackOfHost);
    }

    @Override
    public synchronized List<PartitionLocation> allocate(SlotRequest req, List<WorkerInfo> workers) {
        List<WorkerInfo> usable = WorkerSelection.forApplication(req, workers, maxWorkersPerApp, nextStart);
        int n = usable.size();
        int start = Math.floorMod(nextStart, n);
        nextStart = start + 1;
        List<List<String>> disks = new ArrayList<>(n);
        for (WorkerInfo w : usable) {
            List<String> healthy = new ArrayList<>();
            for (DiskInfo d : w.getDisksList())
                if (d.getStatus() == DiskStatus.DISK_HEALTHY) healthy.add(d.getMountPoint());
            disks.add(healthy);
        }
        int[] diskCursor = new int[n];
        List<PartitionLocation> out = new ArrayList<>(req.numPartitions);
        for (int p = 0; p < req.numPartitions; p++) {
            int w = (start + p) % n;
            out.add(PartitionLocation.newBuilder()
                    .setPartitionId(p)
                    .setEpoch(0)
                    .setWorker(usable.get(w).getAddress())
                    .setDisk(disks.get(w).get(diskCursor[w]++ % disks.get(w).size()))
                    .setRole(LocationRole.PRIMARY)
                    .build());
        }
        return req.replicate ? replicas.withReplicas(req, out, usable) : out;
    }
}
