package io.estuary.master.admin;

import io.estuary.common.status.StatusException;
import io.estuary.master.protocol.MasterCommand;
import io.estuary.server.admin.AdminHttpServer.Response;
import java.util.concurrent.CompletionException;

/** An operator's change through the leader's log, answered once committed or with why not. Stateless. */
final class LoggedChange {
    private LoggedChange() {}

    /**
     * Null once {@code c} committed; else a 409 saying the {@code what} (quota, tags) is not changed and why (a
     * master of the group cannot apply it, leadership moved).
     */
    static Response submit(AdministeredMaster master, MasterCommand c, String what) {
        try {
            master.log().submit(c).join();
            return null;
        } catch (CompletionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            return Response.error(409, what + " not changed: " + cause.getMessage());
        } catch (StatusException | IllegalStateException e) {
            return Response.error(409, what + " not changed: " + e.getMessage());
        }
    }
}
