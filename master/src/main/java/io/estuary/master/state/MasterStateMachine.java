package io.estuary.master.state;

import io.estuary.common.protocol.ApplicationRemoved;
import io.estuary.common.protocol.ApplicationSlots;
import io.estuary.common.protocol.MasterSnapshot;
import io.estuary.common.protocol.ShuffleSlots;
import io.estuary.common.protocol.UnregisteredShuffles;
import io.estuary.common.protocol.MasterCommand;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.ShuffleUnregistered;
import io.estuary.common.protocol.SlotsAllocated;
import io.estuary.common.protocol.WorkerDisksChanged;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.protocol.WorkerState;
import io.estuary.common.protocol.WorkerStateChanged;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * Applies {@link MasterCommand}s to {@link MasterState}. Deterministic: the result depends only on the state and the
 * command, never on clocks, randomness or the local machine, so every replica that applies the same log holds the
 * same state. Decisions that need those (slot placement, liveness) are made before a command is logged, and the
 * command carries their outcome.
 */
public final class MasterStateMachine {
  private final MasterState state = new MasterState();
  private long appliedCommands;

  /** Applies one command. Commands that no longer make sense (a lost worker already gone) are no-ops. */
  public synchronized void apply(MasterCommand command) {
    appliedCommands++;
    switch (command.getCommandCase()) {
      case WORKER_REGISTERED: {
        WorkerInfo w = command.getWorkerRegistered().getWorker();
        state.workers.put(WorkerId.of(w.getAddress()), w);
        break;
      }
      case WORKER_LOST: {
        String id = WorkerId.of(command.getWorkerLost().getWorker());
        state.workers.remove(id);
        state.workerStates.remove(id);
        state.workerStateReasons.remove(id);
        break;
      }
      case WORKER_STATE_CHANGED: {
        WorkerStateChanged c = command.getWorkerStateChanged();
        String id = WorkerId.of(c.getWorker());
        if (!state.workers.containsKey(id)) break;
        if (c.getState() == WorkerState.WORKER_ACTIVE) {
          state.workerStates.remove(id);
          state.workerStateReasons.remove(id);
        } else {
          state.workerStates.put(id, c.getState());
          state.workerStateReasons.put(id, c.getReason());
        }
        break;
      }
      case WORKER_DISKS_CHANGED: {
        WorkerDisksChanged c = command.getWorkerDisksChanged();
        String id = WorkerId.of(c.getWorker());
        WorkerInfo w = state.workers.get(id);
        if (w != null) state.workers.put(id, w.toBuilder().clearDisks().addAllDisks(c.getDisksList()).build());
        break;
      }
      case APPLICATION_REGISTERED: {
        String app = command.getApplicationRegistered().getAppId();
        state.applications.computeIfAbsent(app, a -> new TreeMap<>());
        state.recentlyRemoved.remove(app);
        break;
      }
      case APPLICATION_REMOVED: {
        ApplicationRemoved c = command.getApplicationRemoved();
        state.applications.remove(c.getAppId());
        state.unregisteredShuffles.remove(c.getAppId());
        state.recentlyRemoved.put(c.getAppId(), Boolean.TRUE);
        break;
      }
      case SLOTS_ALLOCATED: {
        SlotsAllocated c = command.getSlotsAllocated();
        // An application removed meanwhile (expired) stays removed; the leader reports the request failed.
        java.util.Map<Integer, List<PartitionLocation>> shuffles = state.applications.get(c.getAppId());
        if (shuffles != null) shuffles.put(c.getShuffleId(), new ArrayList<>(c.getLocationsList()));
        break;
      }
      case SHUFFLE_UNREGISTERED: {
        ShuffleUnregistered c = command.getShuffleUnregistered();
        java.util.Map<Integer, List<PartitionLocation>> shuffles = state.applications.get(c.getAppId());
        if (shuffles == null) break; // the application is gone, and its data with it
        shuffles.remove(c.getShuffleId());
        state.unregisteredShuffles.computeIfAbsent(c.getAppId(), a -> new HashMap<>()).put(c.getShuffleId(), true);
        break;
      }
      case BATCH:
        appliedCommands--; // counted per change, not per entry
        for (MasterCommand c : command.getBatch().getCommandsList()) apply(c);
        break;
      default:
        throw new IllegalArgumentException("unknown master command " + command.getCommandCase());
    }
  }

  /** The whole state, for a snapshot. Deterministic: the same state always gives the same bytes. */
  public synchronized MasterSnapshot snapshot() {
    MasterSnapshot.Builder b = MasterSnapshot.newBuilder().addAllWorkers(state.workers.values());
    for (java.util.Map.Entry<String, WorkerState> e : state.workerStates.entrySet()) {
      b.addWorkerStates(WorkerStateChanged.newBuilder().setWorker(state.workers.get(e.getKey()).getAddress())
          .setState(e.getValue()).setReason(state.workerStateReasons.getOrDefault(e.getKey(), "")));
    }
    for (java.util.Map.Entry<String, java.util.Map<Integer, List<PartitionLocation>>> app : state.applications.entrySet()) {
      ApplicationSlots.Builder a = ApplicationSlots.newBuilder().setAppId(app.getKey());
      for (java.util.Map.Entry<Integer, List<PartitionLocation>> sh : app.getValue().entrySet()) {
        a.addShuffles(ShuffleSlots.newBuilder().setShuffleId(sh.getKey()).addAllLocations(sh.getValue()));
      }
      b.addApplications(a);
    }
    b.addAllRecentlyRemovedApps(state.recentlyRemoved.keySet());
    for (String app : new java.util.TreeSet<>(state.unregisteredShuffles.keySet())) {
      b.addUnregistered(UnregisteredShuffles.newBuilder().setAppId(app)
          .addAllShuffleIds(new java.util.TreeSet<>(state.unregisteredShuffles.get(app).keySet())));
    }
    return b.build();
  }

  /** Replaces the whole state with a snapshot's. */
  public synchronized void restore(MasterSnapshot snap) {
    state.workers.clear();
    state.applications.clear();
    state.recentlyRemoved.clear();
    state.unregisteredShuffles.clear();
    state.workerStates.clear();
    state.workerStateReasons.clear();
    for (WorkerInfo w : snap.getWorkersList()) state.workers.put(WorkerId.of(w.getAddress()), w);
    for (WorkerStateChanged c : snap.getWorkerStatesList()) {
      state.workerStates.put(WorkerId.of(c.getWorker()), c.getState());
      state.workerStateReasons.put(WorkerId.of(c.getWorker()), c.getReason());
    }
    for (ApplicationSlots a : snap.getApplicationsList()) {
      java.util.Map<Integer, List<PartitionLocation>> shuffles = new TreeMap<>();
      for (ShuffleSlots sh : a.getShufflesList()) shuffles.put(sh.getShuffleId(), new ArrayList<>(sh.getLocationsList()));
      state.applications.put(a.getAppId(), shuffles);
    }
    for (String app : snap.getRecentlyRemovedAppsList()) state.recentlyRemoved.put(app, Boolean.TRUE);
    for (UnregisteredShuffles u : snap.getUnregisteredList()) {
      java.util.Map<Integer, Boolean> ids = new HashMap<>();
      for (int id : u.getShuffleIdsList()) ids.put(id, true);
      state.unregisteredShuffles.put(u.getAppId(), ids);
    }
  }

  /** Reads the state consistently with respect to concurrent applies. */
  public synchronized <T> T read(Function<MasterState, T> reader) {
    return reader.apply(state);
  }

  public synchronized long appliedCommands() {
    return appliedCommands;
  }
}
