/**
 * Requests whose bytes are not the message they claim to be. grpc-js answers
 * a request it cannot decode with INTERNAL, which says "our bug" when it is
 * the caller's: the services are registered with decoders that never throw
 * (an undecodable message becomes a marker), and one interceptor answers the
 * marker of a unary call with INVALID_ARGUMENT naming the message type. A
 * stream's handler gets the marker (undecodableReason) and ends the stream
 * itself: only the handler can also let go of what the stream holds (its
 * deliveries), and an interceptor's status on a stream that had sent runs
 * was seen never to reach the client.
 */
import { ServerInterceptingCall, status, type ServerInterceptor, type ServiceDefinition } from '@grpc/grpc-js';

const UNDECODABLE = Symbol('undecodable request');

interface Undecodable {
  [UNDECODABLE]: string;
}

function isUndecodable(m: unknown): m is Undecodable {
  return typeof m === 'object' && m !== null && UNDECODABLE in m;
}

/** Why a stream message could not be decoded ("request: not a valid …"), or null for a real message. */
export function undecodableReason(m: unknown): string | null {
  return isUndecodable(m) ? m[UNDECODABLE] : null;
}

/** The service with decoders that return a marker instead of throwing. */
export function tolerantService(service: ServiceDefinition, typeNames: Readonly<Record<string, string>> = {}): ServiceDefinition {
  const out: Record<string, ServiceDefinition[string]> = {};
  for (const [name, method] of Object.entries(service)) {
    const decode = method.requestDeserialize;
    const type = typeNames[name] ?? `${name} request`;
    out[name] = {
      ...method,
      requestDeserialize: (bytes: Buffer) => {
        try {
          return decode(bytes);
        } catch (err) {
          return { [UNDECODABLE]: `request: not a valid ${type} message (${(err as Error).message.slice(0, 120)})` } as Undecodable;
        }
      },
    };
  }
  return out as ServiceDefinition;
}

export const malformedInterceptor: ServerInterceptor = (method, call) =>
  method.requestStream
    ? new ServerInterceptingCall(call)
    : new ServerInterceptingCall(call, {
    start: (next) => {
      next({
        onReceiveMessage: (message, pass) => {
          if (isUndecodable(message)) {
            call.sendStatus({ code: status.INVALID_ARGUMENT, details: message[UNDECODABLE] });
            return;
          }
          pass(message);
        },
      });
    },
  });
