package io.estuary.network.layeringfixture.b;

/** Imports nothing of the fixture. */
public class Below {}
