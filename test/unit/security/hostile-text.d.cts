import type { System } from "../../../core/sdk/system";

export declare const RETITLE: string;
export declare const CLEAR: string;
export declare const FAKE_LINE: string;
export declare const RLO: string;
export declare const BIDI_NAME: string;
export declare const RAW_TERMINAL: string[];
export declare const RAW_BIDI: string[];
export declare function hostileTextSystem(S: typeof System): System;
export declare function recordHostileText(S: typeof System, root: string, runId?: string): Promise<string>;
