/**
 * Workflow definitions: the graph checks (duplicate names, unknown and
 * repeated parents, self-edges, cycles named step by step, trigger rules),
 * the topological order and the planned children, the stored form (also of
 * definitions stored before trigger rules); the client's trigger names; and
 * the CLI's step tree.
 */
import { describe, expect, it } from 'vitest';
import { TimelaneError } from '../../daemon/errors.js';
import { fromStored, orderSteps, planSteps, sameDefinition, toStored, type StepSpec } from '../../daemon/workflows/definition.js';
import { stepTree } from '../../clients/cli/workflow-format.js';
import { definitionToWire } from '../../clients/typescript/src/workflow-convert.js';
import type { WorkflowStepInfo } from '@timelane/client';

function step(name: string, after: string[] = [], trigger: StepSpec['trigger'] = 'all_success'): StepSpec {
  return { name, queue: 'q', payload: Buffer.from(name), priority: 0, delivery: 'at_least_once', maxAttempts: 3, initialBackoffMs: 1000, maxBackoffMs: 300000, leaseMs: 30000, after, trigger };
}

function refusal(steps: StepSpec[]): string {
  try {
    orderSteps('definition.steps', steps);
  } catch (err) {
    expect(err).toBeInstanceOf(TimelaneError);
    expect((err as TimelaneError).kind).toBe('invalid_argument');
    return (err as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('orderSteps', () => {
  it('orders a diamond parents first, ties in definition order', () => {
    const order = orderSteps('s', [step('d', ['b', 'c']), step('c', ['a']), step('b', ['a']), step('a')]).map((s) => s.name);
    expect(order).toEqual(['a', 'c', 'b', 'd']);
  });

  it('orders chains, fan-out and fan-in so that every parent comes first', () => {
    const steps = [step('join', ['f1', 'f2', 'f3']), ...['f1', 'f2', 'f3'].map((f) => step(f, ['root'])), step('root'), step('tail', ['join'])];
    const order = orderSteps('s', steps).map((s) => s.name);
    const at = new Map(order.map((n, i) => [n, i]));
    for (const s of steps) for (const p of s.after) expect(at.get(p) as number).toBeLessThan(at.get(s.name) as number);
  });

  it('names duplicate steps', () => {
    expect(refusal([step('a'), step('b'), step('a')])).toBe('definition.steps[2].name: duplicate step name "a" (also definition.steps[0])');
  });

  it('names an edge to an unknown step', () => {
    expect(refusal([step('a'), step('b', ['a', 'nope'])])).toBe('definition.steps[1].after[1]: step "b" runs after unknown step "nope"');
  });

  it('names a self-edge and a repeated parent', () => {
    expect(refusal([step('a', ['a'])])).toBe('definition.steps[0].after[0]: step "a" cannot run after itself');
    expect(refusal([step('a'), step('b', ['a', 'a'])])).toBe('definition.steps[1].after[1]: step "b" names "a" twice');
  });

  it('names the steps of a cycle in run order', () => {
    const msg = refusal([step('start'), step('x', ['start', 'z']), step('y', ['x']), step('z', ['y']), step('end', ['z'])]);
    expect(msg).toMatch(/^definition\.steps: the steps form a cycle: /);
    const cycle = msg.replace(/^.*cycle: /, '').split(' → ');
    expect(cycle[0]).toBe(cycle.at(-1));
    expect(new Set(cycle)).toEqual(new Set(['x', 'y', 'z']));
    // each consecutive pair is an edge parent → child
    for (let i = 0; i + 1 < cycle.length; i++) expect(['x>y', 'y>z', 'z>x']).toContain(`${cycle[i]}>${cycle[i + 1]}`);
  });

  it('names a step with an unknown trigger, or a root step with all_done (it has no parents to wait for)', () => {
    expect(refusal([step('a'), step('b', ['a'], 'any_done' as StepSpec['trigger'])])).toBe('definition.steps[1].trigger: step "b": unknown trigger "any_done"');
    expect(refusal([step('a'), step('cleanup', [], 'all_done')])).toMatch(/^definition\.steps\[1\]\.trigger: step "cleanup" has no parents: /);
    expect(orderSteps('s', [step('a'), step('cleanup', ['a'], 'all_done')]).map((s) => s.trigger)).toEqual(['all_success', 'all_done']);
  });

  it('refuses an empty definition and bad names', () => {
    expect(refusal([])).toBe('definition.steps: must hold at least one step');
    expect(refusal([step('has space')])).toMatch(/^definition\.steps\[0\]\.name: must be 1\.\.128 chars/);
  });
});

describe('planSteps and the stored form', () => {
  it('gives positions and children', () => {
    const planned = planSteps(orderSteps('s', [step('a'), step('b', ['a']), step('c', ['a']), step('d', ['b', 'c'])]));
    expect(planned.map((p) => [p.name, p.position, p.children])).toEqual([
      ['a', 0, ['b', 'c']],
      ['b', 1, ['d']],
      ['c', 2, ['d']],
      ['d', 3, []],
    ]);
  });

  it('round-trips and compares regardless of key order', () => {
    const spec = { name: 'w', maxInFlight: 2, steps: orderSteps('s', [step('a'), step('b', ['a'])]) };
    const stored = JSON.parse(JSON.stringify(toStored(spec))) as Record<string, unknown>;
    const reordered = Object.fromEntries(Object.entries(stored).reverse());
    expect(sameDefinition(fromStored(reordered), spec)).toBe(true);
    expect(sameDefinition(fromStored(reordered), { ...spec, maxInFlight: 3 })).toBe(false);
  });
});

describe('trigger rules in the stored form and the client', () => {
  const spec = { name: 'w', maxInFlight: 0, steps: orderSteps('s', [step('a'), step('b', ['a']), step('cleanup', ['a', 'b'], 'all_done')]) };

  it('keeps all_done, and stores nothing for all_success: a definition stored before trigger rules reads (and compares) the same', () => {
    const stored = toStored(spec);
    expect(stored.steps.map((s) => s.trigger)).toEqual([undefined, undefined, 'all_done']);
    expect(fromStored(JSON.parse(JSON.stringify(stored))).steps.map((s) => s.trigger)).toEqual(['all_success', 'all_success', 'all_done']);
    // As 0008's PutWorkflow stored it: no trigger anywhere. Putting the same definition again changes nothing.
    const before = { name: 'w', maxInFlight: 0, steps: stored.steps.slice(0, 2) };
    const same = { ...spec, steps: spec.steps.slice(0, 2) };
    expect(sameDefinition(fromStored(before), same)).toBe(true);
    expect(sameDefinition(fromStored(JSON.parse(JSON.stringify(stored))), { ...spec, steps: spec.steps.map((s) => ({ ...s, trigger: 'all_success' as const })) })).toBe(false);
  });

  it('sends trigger names on the wire, and refuses a name that is neither (a typo must not become all_success)', () => {
    const wire = definitionToWire({ name: 'w', steps: [{ name: 'a', queue: 'q' }, { name: 'c', queue: 'q', after: ['a'], trigger: 'all_done' }] });
    expect(wire.steps?.map((s) => s.trigger)).toEqual(['STEP_TRIGGER_UNSPECIFIED', 'TRIGGER_ALL_DONE']);
    expect(() => definitionToWire({ name: 'w', steps: [{ name: 'a', queue: 'q', trigger: 'all-done' as 'all_done' }] })).toThrow('steps[0].trigger: must be "all_success" or "all_done" (got "all-done")');
  });
});

describe('stepTree', () => {
  const info = (name: string, after: string[], state: WorkflowStepInfo['state'], trigger: WorkflowStepInfo['trigger'] = 'all_success'): WorkflowStepInfo => ({
    name, state, after, trigger, queue: 'q', generation: 1, attempts: 1, jobId: '', runId: '', readyAtMs: 0, startedAtMs: 0, firedAtMs: 0, finishedAtMs: 0, lagMs: 0, error: '', outputBytes: 0, output: null,
  });

  it('hangs each step under its first parent and names the other parents', () => {
    const tree = stepTree([info('a', [], 'succeeded'), info('b', ['a'], 'failed'), info('c', ['a'], 'succeeded'), info('d', ['b', 'c'], 'upstream_failed')]);
    expect(tree).toBe(
      ['└─ a  succeeded  attempts 1', '   ├─ b  failed  attempts 1', '   │  └─ d  upstream_failed  attempts 1  after: b, c', '   └─ c  succeeded  attempts 1'].join('\n'),
    );
  });

  it('marks a step that runs whatever its parents\' outcome', () => {
    const tree = stepTree([info('a', [], 'failed'), info('cleanup', ['a'], 'succeeded', 'all_done')]);
    expect(tree).toBe(['└─ a  failed  attempts 1', '   └─ cleanup  succeeded  attempts 1  all_done'].join('\n'));
  });
});
