package io.estuary.network.layeringfixture;

import io.estuary.network.layeringfixture.a.UsesRoot;

/** A root package that composes its sub-package, which reaches back up: the shape LayeringRules must reject. */
public class Root {
    UsesRoot part;
}
