#!/usr/bin/env node
'use strict';
// The CNI plugin: one bundled file, so a call pays for as little module loading as possible. Every verb is
// synchronous and writes stdout/stderr synchronously, so the process exits at once: process.exit skips tearing
// the heap and the environment down, a few ms of every call.
process.exit(require('../dist/sriovctl-cni.bundle.js').main());
