/**
 * The extension's command ids, in one place: what package.json contributes (test/unit/extension/
 * command-ids.test.ts checks the two agree) and the commands registered for the extension's own
 * use only. Code names a command through these constants, never as a string of its own.
 */
export const COMMANDS = {
  openInvestigator: "causeway.openInvestigator",
  findCause: "causeway.findCause",
  runTest: "causeway.runTest",
  verifyRun: "causeway.verifyRun",
  replayRun: "causeway.replayRun",
  recordDemo: "causeway.recordDemo",
  recordProgram: "causeway.recordProgram",
  addLaunchConfiguration: "causeway.addLaunchConfiguration",
  exportReport: "causeway.exportReport",
  setReplayApiKey: "causeway.setReplayApiKey",
  importOtel: "causeway.importOtel",
  openBlob: "causeway.openBlob",
  openEventsFile: "causeway.openEventsFile",
  refresh: "causeway.refresh",
  showOutput: "causeway.showOutput",
  reveal: "causeway.reveal",
  revealInTree: "causeway.revealInTree",
  openLine: "causeway.openLine",
  connectCollector: "causeway.connectCollector",
  filterCollector: "causeway.filterCollector",
  moreCollectorRuns: "causeway.moreCollectorRuns",
  disconnectCollector: "causeway.disconnectCollector",
  /** The preload's file URL, for a launch configuration's `${command:…}`. */
  preloadPath: "causeway.preloadPath",
} as const;

/** Registered but not contributed: tree items invoke them, the palette never shows them. */
export const INTERNAL_COMMANDS = {
  openCollectorRun: "causeway.openCollectorRun",
} as const;

export type CommandId = (typeof COMMANDS)[keyof typeof COMMANDS] | (typeof INTERNAL_COMMANDS)[keyof typeof INTERNAL_COMMANDS];
