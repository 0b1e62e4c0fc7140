/** The command's machinery: the subcommands, the chart, the scenario files. Not API. */
@NullMarked
package dev.quell.cli.internal;

import org.jspecify.annotations.NullMarked;
