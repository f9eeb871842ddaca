// Types for workers.mjs (imported by the webview's TypeScript tests).
export declare function recordWorkers(sdk: { System: new (config: any) => any }, root: string, runId?: string, rounds?: number): Promise<void>;
