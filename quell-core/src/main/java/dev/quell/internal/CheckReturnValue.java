package dev.quell.internal;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a method (or every method of a type) whose result is the whole point of calling it: an
 * immutable value's {@code with…} and {@code without…} methods return a changed copy and leave the
 * receiver as it was, so a call whose result is dropped does nothing. Error Prone's own
 * {@code CheckReturnValue} check honours any annotation of this simple name and reports such a call;
 * so does {@code QuellDiscardedConfiguration}.
 */
@Documented
@Retention(RetentionPolicy.CLASS)
@Target({ElementType.TYPE, ElementType.METHOD, ElementType.CONSTRUCTOR})
@Internal
public @interface CheckReturnValue {}
