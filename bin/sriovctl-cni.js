#!/usr/bin/env node
'use strict';
// The CNI plugin: one bundled file, so a call pays for as little module loading as possible. Every verb writes
// stdout/stderr synchronously, so the process exits as soon as the verb is done: process.exit skips tearing the
// heap and the environment down, a few ms of every call. (A verb is async only where a give-back waits on a
// driver for a recorded VF count.)
Promise.resolve(require('../dist/sriovctl-cni.bundle.js').main()).then((code) => process.exit(code));
