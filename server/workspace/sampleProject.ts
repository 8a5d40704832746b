/**
 * The demo project written into an empty project folder: a tiny TypeScript/Node app with a test,
 * docs and a changelog. Contents are fixed (no dates), so its `contentHash` is the same on every
 * machine.
 */
export const SAMPLE_PROJECT_FILES: Readonly<Record<string, string>> = {
  '.gitignore': 'node_modules/\ndist/\n',
  'package.json':
    JSON.stringify(
      {
        name: 'greeter',
        version: '0.3.0',
        private: true,
        type: 'module',
        scripts: { start: 'tsx src/index.ts', test: 'vitest run' },
        devDependencies: { tsx: '4.23.15', typescript: '6.0.3', vitest: '4.1.12' },
      },
      null,
      2,
    ) + '\n',
  'tsconfig.json':
    JSON.stringify(
      {
        compilerOptions: {
          target: 'ES2022',
          module: 'ESNext',
          moduleResolution: 'Bundler',
          strict: true,
          noEmit: true,
          allowImportingTsExtensions: true,
        },
        include: ['src'],
      },
      null,
      2,
    ) + '\n',
  'README.md': `# greeter

A small command-line greeter, used as the sample project of Agent Studio.

\`\`\`sh
npm install
npm start -- Ada          # Hello, Ada!
npm start -- Ada --shout  # HELLO, ADA!
npm test
\`\`\`

See \`docs/notes.md\` for what is planned next.
`,
  'CHANGELOG.md': `# Changelog

## 0.3.0
- \`--shout\` prints the greeting in capitals.

## 0.2.0
- Greets "world" when no name is given.

## 0.1.0
- First version.
`,
  'src/greet.ts': `export interface GreetOptions {
  shout?: boolean;
}

/** The greeting for \`name\`; an empty or blank name greets the world. */
export function greet(name: string, options: GreetOptions = {}): string {
  const who = name.trim() || 'world';
  const text = \`Hello, \${who}!\`;
  return options.shout ? text.toUpperCase() : text;
}
`,
  'src/index.ts': `import { greet } from './greet.ts';

const args = process.argv.slice(2);
const shout = args.includes('--shout');
const name = args.filter((arg) => !arg.startsWith('--')).join(' ');

console.log(greet(name, { shout }));
`,
  'src/greet.test.ts': `import { describe, expect, it } from 'vitest';
import { greet } from './greet.ts';

describe('greet', () => {
  it('greets by name', () => {
    expect(greet('Ada')).toBe('Hello, Ada!');
  });

  it('greets the world when the name is blank', () => {
    expect(greet('  ')).toBe('Hello, world!');
  });

  it('shouts when asked to', () => {
    expect(greet('Ada', { shout: true })).toBe('HELLO, ADA!');
  });
});
`,
  'docs/notes.md': `# Notes

- Next: a \`--lang\` flag (en, fr, de) with one greeting table in \`src/greet.ts\`.
- Keep \`greet\` pure; \`src/index.ts\` is the only place that reads argv or prints.
- Every behaviour change gets a test in \`src/greet.test.ts\` and a CHANGELOG line.
`,
};
