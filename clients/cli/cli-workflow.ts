/**
 * The CLI's workflow commands:
 *
 *   workflow put --file F       store a new version of a named definition
 *   workflow start --file F     start a run of an inline definition (or --name/--version of a stored one);
 *                               with --cron/--every, a recurring start of a stored one (each occurrence one run)
 *   workflow get ID             the run and its steps as a tree, with states
 *   workflow list               runs, newest first (filters: --name, --state)
 *   workflow retry ID           re-run failed/upstream-failed steps and their downstream
 *   workflow cancel ID          nothing new starts; running steps are asked to stop
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { collect, type ConnectionOptions, connectionOptions, epochArg, durationArg, fail, intInArg, nonNegativeIntArg, out, withClient } from './cli-common.js';
import { toJson } from './format.js';
import { stepTree, workflowRunLine } from './workflow-format.js';
import type { WorkflowDefinitionInput, WorkflowRunStateName } from '@timelane/client';
import { addRecurrenceOptions, recurrenceFromOptions, type RecurrenceOptions } from './cli-recurrence.js';

interface StartOptions extends ConnectionOptions {
  file?: string;
  name?: string;
  version?: number;
  namespace?: string;
  at?: number;
  in?: number;
  maxInFlight?: number;
}

function readDefinition(file: string): WorkflowDefinitionInput {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return fail(new Error(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`));
  }
  try {
    return JSON.parse(text) as WorkflowDefinitionInput;
  } catch (err) {
    return fail(new Error(`${file} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`));
  }
}

export function registerWorkflowCommands(program: Command): void {
  const wf = program.command('workflow').description('workflows: DAGs of steps, each step a run of the engine');

  connectionOptions(wf.command('put'))
    .description('store a new version of a named workflow definition (JSON file: {name, maxInFlight?, steps: [{name, queue, payload?, after?, trigger?, retry?, ...}]})')
    .requiredOption('--file <path>', 'definition file (JSON)')
    .option('--namespace <ns>', 'namespace (default "default")')
    .action((opts: StartOptions) =>
      withClient(opts, async (client) => {
        const res = await client.putWorkflow(readDefinition(opts.file as string), opts.namespace ?? '');
        if (opts.json) return out(toJson(res));
        out(res.unchanged ? `${res.name} v${res.version} (unchanged)` : `${res.name} v${res.version}`);
      }),
    );

  addRecurrenceOptions(connectionOptions(wf.command('start')))
    .description('start a workflow run: an inline definition (--file) or a stored one (--name [--version]); with --cron or --every, each occurrence starts one run of the stored one')
    .option('--file <path>', 'definition file (JSON)')
    .option('--name <name>', 'a definition stored with `workflow put`')
    .option('--version <n>', 'its version (default: the latest)', nonNegativeIntArg)
    .option('--namespace <ns>', 'namespace (default "default")')
    .option('--at <iso|ms>', 'root steps due at this instant (default now)', epochArg)
    .option('--in <duration>', 'root steps due after this long, e.g. 10s', durationArg)
    .option('--max-in-flight <n>', 'most steps running at once (overrides the definition)', nonNegativeIntArg)
    .option('--dedupe-key <key>', 'idempotent start: a second start with this key shows the first run')
    .action((opts: StartOptions & RecurrenceOptions & { dedupeKey?: string }) =>
      withClient(opts, async (client) => {
        if ((opts.file === undefined) === (opts.name === undefined)) fail(new Error('give exactly one of --file and --name'));
        let recurrence;
        try {
          recurrence = recurrenceFromOptions(opts);
        } catch (err) {
          return fail(err);
        }
        if (recurrence) {
          if (!opts.name) fail(new Error('--cron/--every start runs of a stored definition: give --name (store it with `workflow put`)'));
          const res = await client.scheduleWorkflow({ namespace: opts.namespace, workflow: opts.name as string, version: opts.version, maxInFlight: opts.maxInFlight, recurrence });
          if (opts.json) return out(toJson(res));
          return out(`schedule ${res.scheduleJobId}: each occurrence starts a run of ${opts.name} (see: timelane job ${res.scheduleJobId})`);
        }
        const run = await client.startWorkflow({
          namespace: opts.namespace,
          definition: opts.file ? readDefinition(opts.file) : undefined,
          workflow: opts.name,
          version: opts.version,
          at: opts.at,
          delayMs: opts.in,
          maxInFlight: opts.maxInFlight,
          dedupeKey: opts.dedupeKey,
        });
        if (opts.json) return out(toJson(run));
        out(workflowRunLine(run));
      }),
    );

  connectionOptions(wf.command('get'))
    .description('a workflow run and its steps as a tree, with states, attempts and lag')
    .argument('<id>', 'workflow run id')
    .action((id: string, opts: ConnectionOptions) =>
      withClient(opts, async (client) => {
        const r = await client.getWorkflowRun(id);
        if (opts.json) return out(toJson(r));
        out(workflowRunLine(r.run));
        out(stepTree(r.steps));
      }),
    );

  connectionOptions(wf.command('list'))
    .description('workflow runs, newest first')
    .option('--name <name>', 'only runs of this workflow')
    .option('--state <state>', 'only running, succeeded, failed or cancelled runs')
    .option('--namespace <ns>', 'only this namespace')
    .option('--limit <n>', 'page size (1..1000, default 100)', intInArg(1, 1000))
    .option('--page-token <token>', 'continue a previous listing')
    .action((opts: ConnectionOptions & { name?: string; state?: string; namespace?: string; limit?: number; pageToken?: string }) =>
      withClient(opts, async (client) => {
        const page = await client.listWorkflowRuns({
          name: opts.name,
          state: opts.state as Exclude<WorkflowRunStateName, 'unspecified'> | undefined,
          namespace: opts.namespace,
          pageSize: opts.limit,
          pageToken: opts.pageToken,
        });
        if (opts.json) return out(toJson(page));
        for (const r of page.runs) out(workflowRunLine(r));
        if (page.nextPageToken) out(`(more: --page-token ${page.nextPageToken})`);
      }),
    );

  connectionOptions(wf.command('retry'))
    .description('re-run the failed, cancelled and upstream-failed steps of a finished run and everything downstream; succeeded steps keep their outputs')
    .argument('<id>', 'workflow run id')
    .option('--from <step>', 'also re-run this succeeded step and its downstream (repeatable)', collect)
    .action((id: string, opts: ConnectionOptions & { from?: string[] }) =>
      withClient(opts, async (client) => {
        const res = await client.retryWorkflowRun(id, opts.from ?? []);
        if (opts.json) return out(toJson(res));
        out(workflowRunLine(res.run));
        out(`steps reset: ${res.stepsReset.join(', ')}`);
      }),
    );

  connectionOptions(wf.command('cancel'))
    .description('cancel a running workflow run: nothing new starts; running steps get the cooperative cancel')
    .argument('<id>', 'workflow run id')
    .action((id: string, opts: ConnectionOptions) =>
      withClient(opts, async (client) => {
        const res = await client.cancelWorkflowRun(id);
        if (opts.json) return out(toJson(res));
        out(workflowRunLine(res.run));
        out(`runs cancelled: ${res.runsCancelled}, asked to stop: ${res.runsCancelling}`);
      }),
    );
}
