/**
 * What a source file imports, read by TypeScript's own pre-processor (so
 * comments, strings and multi-line imports cannot fool it): static imports
 * and re-exports, `import type`, dynamic `import()`, `require()`, and
 * `/// <reference types>` directives. Works on .ts, .js and .d.ts text.
 */
import { builtinModules } from 'node:module';
import ts from 'typescript';

const BUILTINS = new Set(builtinModules);

/** Every module specifier and type reference in `text`, in order of appearance. */
export function moduleSpecifiers(text: string): string[] {
  const info = ts.preProcessFile(text, true, true);
  return [...info.importedFiles.map((f) => f.fileName), ...info.typeReferenceDirectives.map((r) => r.fileName)];
}

/** `node:fs`, `fs`, `fs/promises`: a Node.js built-in module. */
export function isBuiltin(specifier: string): boolean {
  return specifier.startsWith('node:') || BUILTINS.has(specifier) || BUILTINS.has(specifier.split('/')[0]);
}

export function isRelative(specifier: string): boolean {
  return specifier.startsWith('./') || specifier.startsWith('../');
}

/** The package a bare specifier names: `@grpc/grpc-js/build/x` → `@grpc/grpc-js`, `pg` → `pg`. */
export function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}
