package io.estuary.client.batch;

import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;

/** A batch whose checksum does not match, or that cannot be decoded: this copy of the data is unusable. */
public final class CorruptBatchException extends StatusException {
    public CorruptBatchException(String message) {
        super(StatusCode.SHUFFLE_DATA_LOST, message);
    }
}
