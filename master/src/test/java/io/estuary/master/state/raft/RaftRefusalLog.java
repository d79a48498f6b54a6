package io.estuary.master.state.raft;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.Logger;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Property;

/**
 * Keeps what {@link RaftAuthFailures} logs while attached, for tests that check why a Raft peer was refused. Attach
 * before the refusals, {@link #close} after. Thread-safe.
 */
public final class RaftRefusalLog extends AbstractAppender implements AutoCloseable {
    private final List<LogEvent> events = new CopyOnWriteArrayList<>();

    private RaftRefusalLog() {
        super("raft-refusal-log", null, null, true, Property.EMPTY_ARRAY);
    }

    /** A log attached to the refusals' logger now. */
    public static RaftRefusalLog attach() {
        RaftRefusalLog log = new RaftRefusalLog();
        log.start();
        logger().addAppender(log);
        return log;
    }

    private static Logger logger() {
        return (Logger) LogManager.getLogger(RaftAuthFailures.class.getName());
    }

    @Override
    public void append(LogEvent event) {
        events.add(event.toImmutable());
    }

    /** Whether an event of {@code level} (e.g. "WARN") contains {@code text}. */
    public boolean has(String level, String text) {
        for (LogEvent e : events) {
            if (e.getLevel().name().equals(level)
                    && e.getMessage().getFormattedMessage().contains(text)) return true;
        }
        return false;
    }

    @Override
    public void close() {
        logger().removeAppender(this);
        stop();
    }
}
