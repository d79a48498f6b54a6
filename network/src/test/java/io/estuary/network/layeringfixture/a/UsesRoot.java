package io.estuary.network.layeringfixture.a;

import io.estuary.network.layeringfixture.Root;
import io.estuary.network.layeringfixture.b.Below;

/** Imports its root package (a cycle and a forbidden import) and package b. */
public class UsesRoot {
    Root root;
    Below below;
}
