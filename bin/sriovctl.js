#!/usr/bin/env node
'use strict';
// The host CLI: a small bundled entry that loads the rest through a V8 code cache (src/cli/entry.ts).
require('../dist/sriovctl.bundle.js').run();
