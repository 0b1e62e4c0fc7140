package dev.quell.spring.internal;

/** A setting's value and the property it came from (a policy's own, or quell.defaults). */
record Leaf<T>(T value, String path) {}
