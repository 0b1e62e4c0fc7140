@NullMarked
package dev.quell.http;

import org.jspecify.annotations.NullMarked;
