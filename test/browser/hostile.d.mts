// Types for hostile.mjs (imported by the webview's TypeScript tests).
export declare const XSS: { img: string; script: string; js: string; close: string };
export declare const HOSTILE: string[];
export declare function hostileSystem(sdk: { System: new (config: any) => any }): any;
export declare function recordHostile(sdk: { System: new (config: any) => any }, root: string): Promise<string>;
