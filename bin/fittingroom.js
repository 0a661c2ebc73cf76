#!/usr/bin/env node
// The package's command-line entry: loads the TypeScript CLI through tsx.
import { register } from 'tsx/esm/api';

register();
await import('../server/cli.ts');
