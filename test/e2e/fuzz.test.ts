/**
 * Fuzz: thousands of random, mutated and garbage requests to every RPC and
 * to the Work stream of a real daemon. Asserts: no INTERNAL or UNKNOWN;
 * every INVALID_ARGUMENT names a field (`field: rule`) or the message that
 * could not be decoded; nothing half-written (every one-shot job has its
 * run); afterwards the daemon still fires, and logged no error.
 *
 * Requests are generated from the proto descriptors with a seeded PRNG
 * (FUZZ_SEED, default fixed, so a failure reproduces); FUZZ_ROUNDS scales it.
 */
import * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition as MessageDef, PackageDefinition } from '@grpc/proto-loader';

type MessageTypeDefinition = MessageDef<object, object>;
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTimelaneProto } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { collectRuns, daemonProblems, openClient, startDaemon, stopDaemon, waitUntil, closeClient } from '../helpers/e2e.js';
import { track, untrack } from '../helpers/tracked.js';
import { seeded } from '../helpers/seeded-random.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const ROUNDS = Number(process.env.FUZZ_ROUNDS ?? 1);
const RANDOM_PER_METHOD = 80 * ROUNDS;
const MUTATED_PER_METHOD = 40 * ROUNDS;
const GARBAGE_PER_METHOD = 10 * ROUNDS;
const STREAMS = 30 * ROUNDS;

const rand = seeded(SEED);
const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
const chance = (p: number): boolean => rand() < p;
const int = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));

const STRINGS = [
  '', 'a', 'fuzz', 'fuzz-q', ' ', 'bad queue', 'ns/q', '../etc', '\u0000', 'a\u0000b', '日本語', '🙂🙃', '\ud800', 'x'.repeat(129), 'y'.repeat(5000),
  '00000000-0000-0000-0000-000000000000', '7d6b2e6c-1b7e-4c6f-9a40-5e0b3f1d2c11', 'not-a-uuid', '0', '1', '-1', '42', '9223372036854775807',
  '99999999999999999999', '1:2', '*/5 * * * *', '0 0 31 2 *', '@hourly', 'L', 'Europe/Paris', 'Mars/Olympus', 'default', '*',
];
const INT64S = ['0', '1', '-1', '42', '1000', '1700000000000', '253402300799999', '253402300800000', '9223372036854775807', '-9223372036854775808', '18446744073709551615'];
const INT32S = [0, 1, -1, 2, 7, 100, 1000, 10_001, 2 ** 31 - 1, -(2 ** 31), 65_536];
const DOUBLES = [0, 0.5, -1, 1, 2, Number.NaN, Number.POSITIVE_INFINITY, 1e300, -0];

type Descriptor = MessageTypeDefinition['type'] & { field: FieldDescriptor[] };
interface FieldDescriptor {
  name: string;
  label: string;
  type: string;
  typeName: string;
}

const camel = (s: string): string => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

function typeOf(pkg: PackageDefinition, name: string): { kind: 'message'; d: Descriptor } | { kind: 'enum'; values: string[] } | null {
  const def = (pkg[name] ?? pkg[`timelane.v1.${name}`]) as { format?: string; type?: unknown } | undefined;
  if (!def?.type) return null;
  if (def.format?.includes('EnumDescriptorProto')) return { kind: 'enum', values: (def.type as { value: { name: string }[] }).value.map((v) => v.name) };
  return { kind: 'message', d: def.type as Descriptor };
}

function randomValue(pkg: PackageDefinition, f: FieldDescriptor, depth: number): unknown {
  switch (f.type) {
    case 'TYPE_STRING':
      return chance(0.2) ? Array.from({ length: int(0, 40) }, () => String.fromCharCode(int(0, 0x2fff))).join('') : pick(STRINGS);
    case 'TYPE_INT64':
    case 'TYPE_UINT64':
    case 'TYPE_SINT64':
    case 'TYPE_FIXED64':
      return f.type === 'TYPE_INT64' || f.type === 'TYPE_SINT64' ? pick(INT64S) : pick(INT64S.filter((x) => !x.startsWith('-')));
    case 'TYPE_INT32':
    case 'TYPE_SINT32':
      return pick(INT32S);
    case 'TYPE_UINT32':
    case 'TYPE_FIXED32':
      return Math.abs(pick(INT32S));
    case 'TYPE_DOUBLE':
    case 'TYPE_FLOAT':
      return pick(DOUBLES);
    case 'TYPE_BOOL':
      return chance(0.5);
    case 'TYPE_BYTES':
      return chance(0.05) ? Buffer.alloc(int(200_000, 400_000), 1) : Buffer.from(Array.from({ length: int(0, 64) }, () => int(0, 255)));
    case 'TYPE_ENUM': {
      const t = typeOf(pkg, f.typeName);
      return t?.kind === 'enum' ? pick(t.values) : 0;
    }
    case 'TYPE_MESSAGE': {
      const t = typeOf(pkg, f.typeName);
      return t?.kind === 'message' && depth < 4 ? randomMessage(pkg, t.d, depth + 1) : undefined;
    }
    default:
      return undefined;
  }
}

function randomMessage(pkg: PackageDefinition, d: Descriptor, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of d.field) {
    if (chance(0.35)) continue;
    if (f.label === 'LABEL_REPEATED') {
      const n = chance(0.03) ? int(1001, 1100) : int(0, 4);
      out[camel(f.name)] = Array.from({ length: n }, () => randomValue(pkg, f, depth)).filter((x) => x !== undefined);
    } else {
      const v = randomValue(pkg, f, depth);
      if (v !== undefined) out[camel(f.name)] = v;
    }
  }
  return out;
}

function mutate(bytes: Buffer): Buffer {
  const b = Buffer.from(bytes);
  const edits = int(1, 4);
  for (let k = 0; k < edits && b.length > 0; k++) {
    const at = int(0, b.length - 1);
    switch (int(0, 2)) {
      case 0:
        b[at] = int(0, 255);
        break;
      case 1:
        b[at] ^= 0x80;
        break;
      default:
        return Buffer.concat([b.subarray(0, at), Buffer.from([int(0, 255), int(0, 255)]), b.subarray(at)]);
    }
  }
  return chance(0.2) ? b.subarray(0, int(0, b.length)) : b;
}

interface Outcome {
  method: string;
  how: 'random' | 'mutated' | 'garbage';
  code: number;
  details: string;
}

const FIELD_MESSAGE = /^([a-z][a-z0-9_]*(\[\d+\])?)(\.[a-z][a-z0-9_]*(\[\d+\])?)*: |^request: not a valid /;

let db: TestDatabase;
let daemon: DaemonProcess;

beforeAll(async () => {
  db = await createTestDatabase(4);
  daemon = await startDaemon({ databaseUrl: db.url });
});

afterAll(async () => {
  await stopDaemon(daemon);
  await db?.drop();
});

/** How many acks one well-behaved answer message calls for: a CompleteBatch one per ref (one when refused whole), a Drain none. */
function acksFor(m: Record<string, unknown>): number {
  // Neither is acked (a malformed Unstarted ends the stream, as a malformed Subscribe does).
  if ('drain' in m || 'unstarted' in m) return 0;
  if ('completes' in m) {
    const n = ((m.completes as { refs?: unknown[] } | null)?.refs ?? []).length;
    return n >= 1 && n <= 10_000 ? n : 1;
  }
  return 1;
}

describe(`fuzz (seed ${SEED})`, () => {
  it('random, mutated and garbage requests to every RPC and to the Work stream: no INTERNAL/UNKNOWN, fields named, nothing half-written, still fires', { timeout: 180_000 }, async () => {
    const { packageDefinition: pkg } = loadTimelaneProto();
    const outcomes: Outcome[] = [];
    const services = ['timelane.v1.Scheduler', 'timelane.v1.Admin'];
    for (const svc of services) {
      const def = pkg[svc] as grpc.ServiceDefinition;
      const raw: grpc.ServiceDefinition = Object.fromEntries(Object.entries(def).map(([name, m]) => [name, { ...m, requestSerialize: (b: Buffer) => b }]));
      const Typed = grpc.makeGenericClientConstructor(def, svc);
      const Raw = grpc.makeGenericClientConstructor(raw, `${svc}Raw`);
      const typed = track(new Typed(daemon.address, grpc.credentials.createInsecure()), 'fuzz client');
      const rawClient = track(new Raw(daemon.address, grpc.credentials.createInsecure(), { channelOverride: typed.getChannel() }), 'fuzz raw client');
      try {
        for (const [name, m] of Object.entries(def)) {
          const reqType = (m as unknown as { requestType: MessageTypeDefinition }).requestType.type as Descriptor;
          const call = (client: grpc.Client, req: unknown, how: Outcome['how']) =>
            new Promise<void>((resolve) => {
              const fn = (client as unknown as Record<string, (r: unknown, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null) => void) => void>)[name];
              fn.call(client, req, { deadline: Date.now() + 15_000 }, (e) => {
                outcomes.push({ method: `${svc}/${name}`, how, code: e ? e.code : 0, details: e?.details ?? '' });
                resolve();
              });
            });
          const valid: Buffer[] = [];
          for (let i = 0; i < RANDOM_PER_METHOD; i++) {
            const req = randomMessage(pkg, reqType);
            let bytes: Buffer;
            try {
              bytes = m.requestSerialize(req);
            } catch {
              continue; // not encodable: the client library refuses it before it leaves
            }
            valid.push(bytes);
            await call(typed, req, 'random');
          }
          for (let i = 0; i < MUTATED_PER_METHOD && valid.length > 0; i++) await call(rawClient, mutate(pick(valid)), 'mutated');
          for (let i = 0; i < GARBAGE_PER_METHOD; i++) await call(rawClient, Buffer.from(Array.from({ length: int(1, 300) }, () => int(0, 255))), 'garbage');
        }
      } finally {
        typed.close();
        rawClient.close();
        untrack(typed);
        untrack(rawClient);
      }
    }

    // The Work stream: random message sequences (a Subscribe first, or not) and garbage frames.
    const work = pkg['timelane.v1.Worker'] as grpc.ServiceDefinition;
    const workReq = (pkg['timelane.v1.WorkRequest'] as MessageTypeDefinition).type as Descriptor;
    const rawWork: grpc.ServiceDefinition = { Work: { ...work.Work, requestSerialize: (b: Buffer) => b } };
    const WorkRaw = grpc.makeGenericClientConstructor(rawWork, 'WorkerRaw');
    const wc = track(new WorkRaw(daemon.address, grpc.credentials.createInsecure()), 'fuzz work client');
    const ackCodes: number[] = [];
    try {
      for (let s = 0; s < STREAMS; s++) {
        const stream = (wc as unknown as { Work: (o: grpc.CallOptions) => grpc.ClientDuplexStream<Buffer, { ack?: { code: number }; acks?: { acks: { code: number }[] } }> }).Work({ deadline: Date.now() + 15_000 });
        let acked = 0;
        let over = false;
        const ended = new Promise<void>((resolve) => {
          // (the client decodes responses with the real decoder: only requests are raw)
          stream.on('data', (msg: { ack?: { code: number }; acks?: { acks: { code: number }[] } }) => {
            if (msg.ack) ackCodes.push(msg.ack.code);
            for (const a of msg.acks?.acks ?? []) ackCodes.push(a.code);
            // Acks, not messages: the daemon sends the acks it has ready at once in one AckBatch.
            acked += (msg.ack ? 1 : 0) + (msg.acks?.acks.length ?? 0);
          });
          stream.on('error', (e: grpc.ServiceError) => outcomes.push({ method: 'Worker/Work', how: 'random', code: e.code, details: e.details }));
          stream.on('status', () => {
            over = true;
            resolve();
          });
        });
        // Half the streams behave (a good Subscribe, then only decodable answers), so answers get acked; the rest are wild.
        const wild = s % 2 === 1;
        const first = work.Work.requestSerialize({ subscribe: wild ? { queues: [pick(['fuzz', 'bad queue', ''])], maxInFlight: pick([0, 10, 20_000]) } : { queues: ['fuzz-work'], maxInFlight: 10 } });
        stream.write(first);
        /** Acks the answers written so far call for (see acksFor). */
        let answers = 0;
        const frames: string[] = [first.toString('base64')];
        for (let i = 0; i < 20; i++) {
          if (wild && chance(0.15)) {
            const g = Buffer.from(Array.from({ length: int(1, 100) }, () => int(0, 255)));
            frames.push(g.toString('base64'));
            stream.write(g);
          }
          else {
            // Well-behaved: exactly one answer per message, never a second Subscribe, nor an Unstarted (not an answer: a malformed one ends the stream).
            const answerField = pick(workReq.field.filter((f) => f.name !== 'subscribe' && f.name !== 'unstarted'));
            const m = wild ? randomMessage(pkg, workReq) : { [camel(answerField.name)]: randomValue(pkg, answerField, 0) ?? {} };
            try {
              const bytes = work.Work.requestSerialize(m);
              frames.push(bytes.toString('base64'));
              stream.write(bytes);
              answers += wild ? 1 : acksFor(m);
            } catch {
              /* not encodable */
            }
          }
        }
        // Every answer is acked on a stream that stays open: wait for them (or the stream's end), then close it.
        // A wild stream's random messages may hold several answers, or none the decoder keeps: a shorter wait.
        const settled = await waitUntil(() => over || acked >= answers, wild ? 2_000 : 10_000, 10);
        if (!settled) console.log(`[fuzz] stream ${s}: ${acked}/${answers} answers acked before its end; first frames (base64): ${frames.slice(0, 4).join(' ')}`);
        stream.end();
        await ended;
      }
    } finally {
      wc.close();
      untrack(wc);
    }

    const byCode = new Map<number, number>();
    for (const o of outcomes) byCode.set(o.code, (byCode.get(o.code) ?? 0) + 1);
    console.log(`[fuzz] seed ${SEED}: ${outcomes.length} calls and stream ends, ${ackCodes.length} acks; codes ${JSON.stringify(Object.fromEntries(byCode))}`);
    expect(outcomes.length).toBeGreaterThan(2_000);
    const broken = outcomes.filter((o) => o.code === grpc.status.INTERNAL || o.code === grpc.status.UNKNOWN);
    expect(broken.slice(0, 5), 'INTERNAL/UNKNOWN answers').toEqual([]);
    // Every stream ended when its client half-closed (one that had runs in flight and then got an
    // undecodable frame used to hang until its deadline: the interceptor's status never reached it).
    expect(outcomes.filter((o) => o.method === 'Worker/Work' && o.code === grpc.status.DEADLINE_EXCEEDED)).toEqual([]);
    expect(ackCodes.length, 'answers on well-behaved streams are acked').toBeGreaterThan(STREAMS * 5);
    expect(ackCodes.filter((c) => c === grpc.status.INTERNAL || c === grpc.status.UNKNOWN)).toEqual([]);
    const unnamed = outcomes.filter((o) => o.code === grpc.status.INVALID_ARGUMENT && !FIELD_MESSAGE.test(o.details));
    expect(unnamed.slice(0, 5), 'INVALID_ARGUMENT without a field').toEqual([]);
    expect(outcomes.filter((o) => o.code === grpc.status.INVALID_ARGUMENT).length).toBeGreaterThan(500);

    // Nothing half-written: every one-shot job has its run.
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      const { rows } = await c.query<{ n: string }>(`SELECT count(*) AS n FROM timelane.jobs j WHERE j.kind = 'once' AND NOT EXISTS (SELECT 1 FROM timelane.runs r WHERE r.job_id = j.id)`);
      expect(Number(rows[0].n)).toBe(0);
    } finally {
      await c.end();
    }

    // Still fires, and logged no error.
    const client = openClient(daemon.address);
    const worker = collectRuns({ address: daemon.address, queues: ['after-fuzz'] });
    try {
      const { run } = await client.schedule({ queue: 'after-fuzz', delayMs: 200 });
      expect(await waitUntil(() => worker.recorder.byRun.has(run.id), 10_000)).toBe(true);
    } finally {
      await worker.close();
      closeClient(client);
    }
    expect(daemon.running).toBe(true);
    expect(daemonProblems(daemon)).toEqual([]);
  });
});
