/**
 * The schema's names are one-byte strings (server/schema/studioSchema.ts), so the results the
 * server stringifies stay one-byte even though schema.graphql has characters past Latin-1 in its
 * descriptions. How V8 holds a string is read from its own serializer: a one-byte string is
 * written with the tag '"', a two-byte one with 'c'.
 */
import { serialize } from 'node:v8';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildASTSchema, buildSchema, isEnumType, isObjectType, parse, printSchema } from 'graphql';
import type { GraphQLSchema } from 'graphql';
import { createSchema } from 'graphql-yoga';
import { oneByte, studioTypeDefs } from '../../server/schema/studioSchema.ts';
import { jitExecute } from '../../server/schema/execution.ts';

const ONE_BYTE_TAG = '"'.charCodeAt(0);
const isOneByte = (text: string) => serialize(text)[2] === ONE_BYTE_TAG;

// A description past Latin-1, as schema.graphql has. The names are made at run time, new for
// each schema: V8 interns a name once, and hands out the string it holds first (a name that is
// also a literal in loaded code is held one-byte; one interned two-byte stays two-byte).
let schemas = 0;
function fixture() {
  const tag = `Q${process.pid}${Date.now().toString(36)}${++schemas}`.toUpperCase();
  const status = `${tag}_WAITING_FOR_SOMEONE`;
  const item = `${tag}Item`;
  const sdl = `"Reads a path, a command …"
type Query { status: ${tag}Status!, item: ${item}! }
enum ${tag}Status { ${status} ${tag}_ANSWERED_BY_SOMEONE }
type ${item} { label: String! }`;
  return { sdl, status, item };
}

async function resultText(schema: GraphQLSchema, status: string): Promise<string> {
  const result = await jitExecute({
    schema,
    document: parse('{ status item { __typename label } }'),
    rootValue: { status, item: { label: 'plain ASCII' } },
  });
  return JSON.stringify(result);
}

describe('the schema is built with one-byte names', () => {
  it('sees a two-byte result from names sliced out of a text with a character past Latin-1', async () => {
    // The control: what the server built before, and why its results were two-byte.
    const { sdl, status, item } = fixture();
    const text = await resultText(buildSchema(sdl), status);
    expect(JSON.parse(text)).toEqual({
      data: {
        status,
        item: { __typename: item, label: 'plain ASCII' },
      },
    });
    expect(isOneByte(text)).toBe(false);
  });

  it('stringifies the same result one-byte from studioTypeDefs', async () => {
    const { sdl, status, item } = fixture();
    const text = await resultText(buildASTSchema(studioTypeDefs(sdl)), status);
    expect(isOneByte(text)).toBe(true);
    expect(JSON.parse(text)).toEqual({
      data: { status, item: { __typename: item, label: 'plain ASCII' } },
    });
  });

  it('holds every type, field and enum value name of schema.graphql one-byte, and changes nothing else', () => {
    const file = readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8');
    const schema = createSchema({ typeDefs: studioTypeDefs(file) });
    const names: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (type.name.startsWith('__')) continue;
      names.push(type.name);
      if (isObjectType(type)) names.push(...Object.keys(type.getFields()));
      if (isEnumType(type)) names.push(...type.getValues().map((v) => v.name));
    }
    expect(names.length).toBeGreaterThan(500);
    expect(names.filter((name) => !isOneByte(name))).toEqual([]);
    expect(printSchema(schema)).toBe(printSchema(buildSchema(file)));
  });

  it('copies a name character for character', () => {
    const twoByte = 'ZQ9_SOME_LONG_ENUM_VALUE …'.slice(0, 24);
    expect(isOneByte(twoByte)).toBe(false);
    expect(oneByte(twoByte)).toBe(twoByte);
    expect(isOneByte(oneByte(twoByte))).toBe(true);
  });
});
