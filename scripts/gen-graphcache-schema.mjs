// Builds the minified introspection Graphcache needs (src/graphql/graphcache-schema.json)
// from schema.graphql, so the cache knows every union member and interface exactly.
import { readFileSync, writeFileSync } from 'node:fs';
import { buildSchema, introspectionFromSchema } from 'graphql';
import { minifyIntrospectionQuery } from '@urql/introspection';

const root = new URL('..', import.meta.url);
const sdl = readFileSync(new URL('schema.graphql', root), 'utf8');
const introspection = introspectionFromSchema(buildSchema(sdl));
const out = new URL('src/graphql/graphcache-schema.json', root);
writeFileSync(out, JSON.stringify(minifyIntrospectionQuery(introspection)));
