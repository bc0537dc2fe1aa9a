// Loaded first into every test process (`--import` in package.json's test script): Node's compile
// cache keeps each module's type-stripped source and V8's code for it on disk, so the test files'
// processes, each of which loads the app anew, neither strip nor compile a module that an earlier
// process of the run (or of an earlier run) already did. The directory is Node's default, which the
// servers that tests start through bin/rolodex.js share (docs/deploy.md §Start and stop).
// A JavaScript module: as the first module of the process, TypeScript here would load Node's
// type stripper into every test process, which the cache spares every module loaded after it.
import { enableCompileCache } from 'node:module';

enableCompileCache();
