package io.estuary.master;

import com.google.protobuf.MessageLite;
import io.estuary.common.status.StatusCode;
import io.estuary.common.util.EstuaryException;
import io.estuary.master.protocol.MasterCommand;
import io.estuary.master.state.PeerSuppliedFields;
import io.estuary.network.rpc.ControlRpcHandler.Reply;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * How the master's request handlers build log commands and answer once a change is committed: an {@link
 * EstuaryException} goes back as it is (it carries its status), anything else as FATAL. Stateless.
 */
final class LoggedChanges {
    private LoggedChanges() {}

    /**
     * A command built by {@code fill}. Fields a newer worker put into a message copied into the command (unknown to
     * this release) are dropped here, before logging, instead of making the command unappliable.
     */
    static MasterCommand command(Consumer<MasterCommand.Builder> fill) {
        MasterCommand.Builder b = MasterCommand.newBuilder();
        fill.accept(b);
        return PeerSuppliedFields.withoutUnknown(b.build());
    }

    /** Answers {@code reply} with {@code answer} once {@code logged} completes, or with why it failed. */
    static void after(CompletableFuture<Void> logged, Reply reply, Supplier<MessageLite> answer) {
        logged.whenComplete((v, e) -> {
            if (e == null) {
                reply.ok(answer.get());
            } else if (cause(e) instanceof EstuaryException) {
                reply.fail(cause(e));
            } else {
                reply.fail(StatusCode.FATAL, "master could not record the change: " + cause(e));
            }
        });
    }

    /** The failure a completion stage wraps. */
    static Throwable cause(Throwable e) {
        return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    }
}
