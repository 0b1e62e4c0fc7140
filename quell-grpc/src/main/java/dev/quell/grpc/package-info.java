/**
 * gRPC for Quell: {@link dev.quell.grpc.ResilienceInterceptor} runs a channel's unary calls (and
 * server-streaming calls until their first response) under a Quell policy and retry budget;
 * {@link dev.quell.grpc.ResilienceServerInterceptor} turns an inbound call's deadline and criticality
 * into the handler's {@link dev.quell.ResilienceContext} and Quell's refusals into statuses a client
 * backs off from. See {@code docs/grpc.md}.
 */
@NullMarked
package dev.quell.grpc;

import org.jspecify.annotations.NullMarked;
