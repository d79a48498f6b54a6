package io.estuary.network.protocol;

import io.estuary.network.buffer.ManagedBuffer;

abstract class AbstractMessage implements Message {
  private final ManagedBuffer body;

  AbstractMessage(ManagedBuffer body) {
    this.body = body;
  }

  @Override
  public ManagedBuffer body() {
    return body;
  }
}
