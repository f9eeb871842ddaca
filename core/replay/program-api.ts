/**
 * What a program the loader runs gets when it imports "causeway-vscode": the package's public API
 * (core/index.ts) but the report builders (core/report/, which sits above replay/). The names are
 * the index's, from the same modules, so a program gets the very objects the caller uses; a unit
 * test (test/unit/architecture.test.ts) checks that the two lists agree. It exists so that nothing
 * inside core/ imports core/index.ts.
 */
export {
  pyFloat,
  floatRepr,
  numberRepr,
  compareCodePoints,
  quote,
  dumps,
  parseLossless,
  toPlain,
  parseJsonObject,
  PyFloat,
  JsonSyntaxError,
  type JsonValue,
  type Layout,
} from "../log/pyjson";
export {
  sha256Hex,
  canonical,
  isRef,
  isHex64,
  refOf,
  blobFileText,
  eventHash,
  deriveSeed,
  compactSegments,
  canonicalDigest,
  compactText,
  slowCanonical,
  ZERO_HASH,
  REF_RE,
  HASH_KEY,
} from "../log/hash";
export {
  fieldProblems,
  refsOf,
  SCHEMA,
  SCHEMAS,
  REQUIRED,
  KNOWN_TYPES,
  type Trust,
  type Site,
  type BaseEvent,
  type RunStartEvent,
  type InputEvent,
  type AgentStartEvent,
  type ContextRecord,
  type Usage,
  type DecisionEvent,
  type GuardRecord,
  type ActionEvent,
  type MessageEvent,
  type RunEndEvent,
  type KnownEvent,
  type AnyEvent,
  type LoadedEvent,
} from "../log/events";
export { problem, type ProblemCode, type Problem } from "../log/problems";
export { EventLogParser, readRun, readEventsFile, type RunData, type ReadOptions } from "../log/reader";
export { checkBlobs } from "../log/blob-check";
export { decodeBlob, blobFileMatches, DEFAULT_MAX_BLOB_BYTES, BlobStore, type BlobResult } from "../log/blobs";
export { newId, timestamp, eventLine, Chain, FileSink, MemorySink, TeeSink, NullSink, type Sink } from "../log/writer";
export { readTestsLog, parseTestsLog, chainTest, appendTest, COMPUTED_TEST_FIELDS, type TestRecord } from "../log/testslog";
export { verifyRunData, verifyRun, type VerifyResult } from "../log/verify";
export {
  globToRegExp,
  setSpecFileReader,
  parseIntervention,
  concerns,
  matchesPart,
  removes,
  parseTarget,
  matchesTarget,
  SpecError,
  type Matcher,
  type Edit,
  type Intervention,
  type ItemLike,
  type SpecFileReader,
  type TargetClause,
  type Target,
  type ActionLike,
} from "../specs/grammar";
export { readSpecFileFromDisk, allowSpecFiles } from "../specs/files";
export { normalCdf, normalQuantile, Z95 } from "../stats/normal";
export { zFor, benjaminiHochberg, sequentialLooks } from "../stats/corrections";
export { wilson, newcombe, type Interval } from "../stats/intervals";
export { mcnemarExact, pairedSummary, type PairedSummary } from "../stats/exact-tests";
export { verdictFor, roleFor, suggestedN, type Verdict, type Role } from "../stats/verdicts";
export { ModelOutput, Item, ModelError, type ModelCall, type ModelFn, type ToolCall, type ToolFn } from "../sdk/items";
export { Runtime, Agent } from "../sdk/runtime";
export type { Tape, ModelCache, ActionSummary, RuntimeOptions } from "../sdk/runtime-options";
export type { DecideOptions, ActOptions } from "../sdk/agent";
export { slug, freeRunId, isSystem, System, type Program, type SystemConfig, type RunOptions, type RunResult } from "../sdk/system";
export { Guard, type GuardMode, type GuardAlert, type CheckContext, type GuardRule, type GuardVerdict, type GuardOptions } from "../sdk/guard";
export { PyRandom } from "../sdk/pyrandom";
export { RunTail, type TailUpdate } from "../log/tail";
export { RunModel } from "../graph/model";
export { Graph, buildGraph, taint, lineage, criticalPath, nodesMatching, targetHits, type GNode, type GEdge, type Evidence } from "../graph/graph";
export { investigate, investigateLite, alertsFor } from "../analysis/investigate";
export { alertRecord } from "../analysis/alerts";
export { sensitivity } from "../analysis/action-view";
export { testSummary } from "../analysis/test-records";
export { influence, listRuns, workspace } from "../analysis/influence";
export {
  type Severity,
  type EvidenceRef,
  type Alert,
  type ProvenanceStatus,
  type ProvenanceRow,
  type CandidateStatus,
  type TestSummary,
  type Candidate,
  type ActionView,
  type TimelineRow,
  type RunSummary,
  type ChannelRow,
  type AgentRow,
  type Matrix,
  type EventView,
  type BlobPreview,
  type Investigation,
  type InfluenceSource,
  type InfluenceEdge,
  type Influence,
  type Workspace,
  type ActionMarks,
  type RunGraph,
} from "../analysis/types";
export { ReplayContext, RunTape, Budget, ReplayError } from "./context";
export { runTest, type TestOptions } from "./run-test";
export { decisionTest, type DecisionTestOptions } from "./decision-test";
export { replayAndDiff } from "./replay-diff";
export { MIN_EFFECT, type TestResult } from "./test-record";
export { attribute } from "./attribute";
export { defaultSuspects, rankedSuspects } from "./suspects";
export type { Attribution, AttributeOptions, Cause, SuspectEvidence, Phase } from "./attribute-types";
export { PairedSequence, pairedBetting, spendAlpha, type BettingOptions, type BettingState } from "../stats/betting";
export {
  Refusal,
  checkTarget,
  checkRemoval,
  estimateCost,
  callsForUsd,
  parsePrice,
  runSources,
  runToolsAndAgents,
  type CostEstimate,
  type PriceTable,
} from "./preflight";
export { causingSpans, segments, type CausingSpan, type SpanResult } from "./spans";
export { failureShapes, confirmedCauses, type FailureShape } from "./shapes";
export { fixCheck, type FixCheck, type FixCheckOptions } from "./fixcheck";
export { narrowAttribution } from "./narrow";
export { applyEdit, interveneOn, spanSpec, type Change } from "../specs/apply";
// ---- capture: SDK adapters, gateway, remote ingest, OpenTelemetry import (docs/capture.md)
export { traceOpenAI, TracedOpenAI, type OpenAILike, type OpenAIToolCall } from "../adapters/openai";
export { traceAnthropic, TracedAnthropic, type AnthropicLike, type ToolUseBlock } from "../adapters/anthropic";
export { ConversationRecorder, openRun, runDir, type CaptureOptions, type OpenRunOptions, type RecordedRequest, type RecordedBlock } from "../adapters/shared";
export { CODECS, codecForPath } from "../adapters/codecs";
export { PLACEHOLDER, type Codec, type ApiName } from "../adapters/codec";
export { rebuildRequest, withoutBlocks, EndpointError } from "./endpoint-replay";
export { endpointDecisionTest, type EndpointTestOptions } from "./endpoint-test";
export { HttpSink, IngestError, type HttpSinkOptions } from "../sdk/httpsink";
export { startGateway, type Gateway } from "../capture/gateway";
export type { GatewayOptions } from "../capture/gateway-options";
export { startCollector, type Collector, type CollectorOptions } from "../capture/server";
export { INGEST_MARKER } from "../store/folder";
export { validateBatch, type StoredRun, type IngestVerdict, type RunHead } from "../store/ingest";
export { AlertWatcher, webhookPayload, type WatchOptions, type WatchedAlert } from "../capture/watch";
export { importOtel, type OtelImportOptions } from "../importers/otel";
export { findEmails, globMatch } from "../util/scan";
export { safeText } from "../log/sanitize";
export { readLimits, MAX_JSON_DEPTH, type ReadLimits } from "../log/safefs";
