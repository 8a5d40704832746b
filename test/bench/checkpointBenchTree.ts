/**
 * The tree `npm run bench:checkpoints` checkpoints: deterministic (a seeded generator), so two
 * calls build byte-identical trees for the studio and for git.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';

export interface BenchTree {
  root: string;
  /** Tracked text files, in a fixed order (the ones `changeFiles` edits). */
  textFiles: string[];
  fileCount: number;
  ignoredCount: number;
  links: number;
  bytes: number;
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  'const',
  'return',
  'function',
  'export',
  'import',
  'value',
  'index',
  'result',
  'await',
  'items',
  'config',
  'handler',
  'request',
  'response',
  'error',
  'string',
  'number',
  'options',
];

function sourceText(random: () => number, bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  while (size < bytes) {
    const n = 3 + Math.floor(random() * 8);
    const words: string[] = [];
    for (let i = 0; i < n; i++) words.push(WORDS[Math.floor(random() * WORDS.length)]!);
    const line = `  ${words.join(' ')}(${Math.floor(random() * 100000)});`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n') + '\n';
}

function write(root: string, rel: string, content: string | Buffer, mode?: number): number {
  const abs = join(root, ...rel.split('/'));
  fs.mkdirSync(join(abs, '..'), { recursive: true });
  fs.writeFileSync(abs, content, mode === undefined ? undefined : { mode });
  return typeof content === 'string' ? Buffer.byteLength(content) : content.length;
}

/** About `files` files and `mb` MB under `root`; 1,500 of the files are in an ignored node_modules. */
export function buildBenchTree(root: string, files: number, mb: number): BenchTree {
  const random = rng(42);
  fs.mkdirSync(root, { recursive: true });
  let bytes = write(root, '.gitignore', 'node_modules/\n*.log\n');
  const ignored = Math.min(1500, Math.floor(files * 0.075));
  const binaries = 40;
  const links = 50;
  const text = files - ignored - binaries - links - 2;
  const binaryBytes = Math.floor(mb * 1e6 * 0.5);
  const textBytes = Math.floor(mb * 1e6 * 0.5);
  const textFiles: string[] = [];
  for (let i = 0; i < text; i++) {
    const rel = `src/pkg${i % 40}/mod${Math.floor(i / 40) % 50}/file${i}.ts`;
    bytes += write(
      root,
      rel,
      sourceText(random, Math.floor((textBytes / text) * (0.5 + random()))),
    );
    textFiles.push(rel);
  }
  const block = Buffer.alloc(binaryBytes / binaries);
  for (let i = 0; i < binaries; i++) {
    for (let j = 0; j < block.length; j += 4) block.writeUInt32LE((random() * 2 ** 32) >>> 0, j);
    bytes += write(root, `assets/blob${i}.bin`, block);
  }
  for (let i = 0; i < ignored; i++)
    write(root, `node_modules/dep${i % 30}/lib/f${i}.js`, sourceText(random, 2000));
  for (let i = 0; i < links; i++) {
    const abs = join(root, 'links', `link${i}.ts`);
    fs.mkdirSync(join(root, 'links'), { recursive: true });
    fs.symlinkSync(`../${textFiles[i]!}`, abs);
  }
  bytes += write(root, 'bin/run.sh', '#!/bin/sh\necho run\n', 0o755);
  return { root, textFiles, fileCount: files, ignoredCount: ignored, links, bytes };
}

/** Rewrites `count` tracked text files (the same ones on every tree for the same `round`). */
export function changeFiles(tree: BenchTree, count: number, round: number): void {
  const stride = Math.max(1, Math.floor(tree.textFiles.length / count));
  for (let i = 0; i < count; i++) {
    const rel = tree.textFiles[(i * stride + round) % tree.textFiles.length]!;
    fs.appendFileSync(join(tree.root, ...rel.split('/')), `// round ${round}\n`);
  }
}

/** Deletes every tracked entry (not node_modules), as a restore of the whole tree starts from. */
export function wipeTracked(tree: BenchTree): void {
  for (const name of fs.readdirSync(tree.root))
    if (name !== 'node_modules' && name !== '.git')
      fs.rmSync(join(tree.root, name), { recursive: true, force: true });
}

/**
 * The changeFiles round of run `rep` of a repeated one-file step: the first run edits the file
 * it always did, the others other files (the same on both trees).
 */
export function roundOf(step: 'one' | 'restoreOne', rep: number): number {
  if (rep === 0) return step === 'one' ? 1 : 3;
  return (step === 'one' ? 10 : 20) + rep;
}
