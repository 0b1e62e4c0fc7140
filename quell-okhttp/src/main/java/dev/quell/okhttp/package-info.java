@NullMarked
package dev.quell.okhttp;

import org.jspecify.annotations.NullMarked;
