package io.estuary.common.config;

/** A configuration value that is missing, unknown or malformed. The message names the key and says what is wrong. */
public class ConfigException extends RuntimeException {
    public ConfigException(String message) {
        super(message);
    }
}
