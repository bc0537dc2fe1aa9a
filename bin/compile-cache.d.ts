// Types of bin/compile-cache.js, which src/cli/main.ts loads before it starts Node again.
export declare function fillCompileCache(directory: string, flags?: readonly string[]): Promise<void>;
