import { OPTION_SPECS } from './config.js';

/** The README's configuration table, rendered from OPTION_SPECS (kept in sync by a test). */
export function renderConfigTable(): string {
  const rows = OPTION_SPECS.map((s) => {
    const def = typeof s.default === 'string' ? (s.default === '' ? '(unset)' : `\`${s.default}\``) : `\`${String(s.default)}\``;
    const flag = s.key === 'memberId' ? '`--member-id <id>`' : `\`${s.flag}\``;
    const shown = s.key === 'memberId' ? '`<hostname>-<pid>`' : def;
    return `| ${flag} | \`${s.env}\` | ${shown} | ${s.description} |`;
  });
  return ['| flag | environment | default | meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}
