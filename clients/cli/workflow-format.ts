/**
 * Text for workflow runs: a one-line summary, and the steps as a plain-text
 * tree. A DAG is drawn as a tree by hanging each step under its first
 * parent; a step with more parents says so ("after: b, c"), so every step
 * appears exactly once. A step that runs whatever its parents' outcome says
 * "all_done".
 */
import type { WorkflowRunInfo, WorkflowStepInfo } from '@timelane/client';
import { clip, iso } from './format.js';

export function workflowRunLine(r: WorkflowRunInfo): string {
  const version = r.version === 0 ? 'inline' : `v${r.version}`;
  const done = r.finishedAtMs ? `  finished ${iso(r.finishedAtMs)}` : '';
  return `${r.id}  ${r.name} (${version})  ${r.state}  steps ${r.stepsSucceeded}/${r.stepsTotal} succeeded, ${r.stepsFailed} failed  started ${iso(r.startAtMs)}${done}`;
}

function stepText(s: WorkflowStepInfo): string {
  const parts = [s.name, s.state];
  if (s.attempts > 0) parts.push(`attempts ${s.attempts}`);
  if (s.generation > 1) parts.push(`generation ${s.generation}`);
  if (s.state === 'succeeded' && s.finishedAtMs && s.startedAtMs) parts.push(`${s.finishedAtMs - s.startedAtMs} ms`);
  if (s.firedAtMs && s.lagMs) parts.push(`lag ${s.lagMs.toFixed(1)} ms`);
  if (s.trigger === 'all_done') parts.push('all_done');
  if (s.after.length > 1) parts.push(`after: ${s.after.join(', ')}`);
  if (s.outputBytes > 0) parts.push(`output ${s.outputBytes} B`);
  if (s.error) parts.push(`error: ${clip(s.error, 80)}`);
  return parts.join('  ');
}

/** The steps as a tree (each under its first parent), in topological order. */
export function stepTree(steps: readonly WorkflowStepInfo[]): string {
  const under = new Map<string, WorkflowStepInfo[]>();
  const roots: WorkflowStepInfo[] = [];
  for (const s of steps) {
    if (s.after.length === 0) roots.push(s);
    else {
      const list = under.get(s.after[0]) ?? [];
      list.push(s);
      under.set(s.after[0], list);
    }
  }
  const lines: string[] = [];
  const draw = (s: WorkflowStepInfo, prefix: string, last: boolean): void => {
    lines.push(`${prefix}${last ? '└─ ' : '├─ '}${stepText(s)}`);
    const kids = under.get(s.name) ?? [];
    kids.forEach((k, i) => draw(k, `${prefix}${last ? '   ' : '│  '}`, i === kids.length - 1));
  };
  roots.forEach((r, i) => draw(r, '', i === roots.length - 1));
  return lines.join('\n');
}
