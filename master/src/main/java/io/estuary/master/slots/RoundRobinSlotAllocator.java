package io.estuary.master.slots;

import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.DiskStatus;
import io.estuary.common.protocol.LocationRole;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.util.EstuaryException;
import java.util.ArrayList;
import java.util.List;

/**
 * Spreads partitions evenly: partition i goes to worker (start + i) mod n, and within a worker the partitions it
 * gets rotate over its healthy disks. The start moves on with every shuffle, so many small shuffles do not all
 * pile their first partitions onto the first worker.
 */
public final class RoundRobinSlotAllocator implements SlotAllocator {
  private int nextStart;

  @Override
  public synchronized List<PartitionLocation> allocate(String appId, int shuffleId, int numPartitions,
      List<WorkerInfo> workers) {
    List<WorkerInfo> usable = new ArrayList<>();
    List<List<String>> disks = new ArrayList<>();
    for (WorkerInfo w : workers) {
      List<String> healthy = new ArrayList<>();
      for (DiskInfo d : w.getDisksList()) {
        if (d.getStatus() == DiskStatus.DISK_HEALTHY) healthy.add(d.getMountPoint());
      }
      if (!healthy.isEmpty()) {
        usable.add(w);
        disks.add(healthy);
      }
    }
    if (usable.isEmpty()) {
      throw new EstuaryException("no slots for " + appId + " shuffle " + shuffleId + ": " + workers.size()
          + " workers registered, none with a healthy disk");
    }
    int n = usable.size();
    int start = Math.floorMod(nextStart, n);
    nextStart = start + 1;
    int[] diskCursor = new int[n];
    List<PartitionLocation> out = new ArrayList<>(numPartitions);
    for (int p = 0; p < numPartitions; p++) {
      int w = (start + p) % n;
      List<String> d = disks.get(w);
      String disk = d.get(diskCursor[w]++ % d.size());
      out.add(PartitionLocation.newBuilder()
          .setPartitionId(p)
          .setEpoch(0)
          .setWorker(usable.get(w).getAddress())
          .setDisk(disk)
          .setRole(LocationRole.PRIMARY)
          .build());
    }
    return out;
  }
}
