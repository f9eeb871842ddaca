/**
 * Causeway: causal logs, replay and Find the cause for multi-agent AI systems.
 * The SDK (record your agents) and the core API (read, verify, analyse, replay, test).
 */
export * from "./log/pyjson";
export * from "./log/hash";
export * from "./log/events";
export * from "./log/problems";
export { EventLogParser, readRun, readEventsFile, checkBlobs, type RunData, type ReadOptions } from "./log/reader";
export * from "./log/blobs";
export * from "./log/writer";
export * from "./log/testslog";
export * from "./log/verify";
export * from "./specs";
export * from "./stats";
export * from "./sdk/runtime";
export * from "./sdk/system";
export * from "./sdk/guard";
export * from "./sdk/pyrandom";
export * from "./log/tail";
export { RunModel } from "./graph/model";
export { Graph, buildGraph, taint, lineage, criticalPath, nodesMatching, targetHits, type GNode, type GEdge, type Evidence } from "./graph/graph";
export { investigate, investigateLite, alertsFor, alertRecord, sensitivity, testSummary } from "./analysis/investigate";
export { influence, listRuns, workspace } from "./analysis/influence";
export type * from "./analysis/types";
export { ReplayContext, RunTape, Budget, runTest, decisionTest, replayAndDiff, ReplayError, MIN_EFFECT, type TestOptions, type TestResult, type DecisionTestOptions } from "./replay/engine";
export { attribute, defaultSuspects, rankedSuspects, type Attribution, type AttributeOptions, type Cause, type ChainHop, type SuspectEvidence, type Phase } from "./replay/attribute";
export { PairedSequence, pairedBetting, spendAlpha, type BettingOptions, type BettingState } from "./betting";
export { Refusal, checkTarget, checkRemoval, estimateCost, callsForUsd, parsePrice, runSources, runToolsAndAgents, type CostEstimate, type PriceTable } from "./replay/preflight";
export { causingSpans, segments, type CausingSpan, type SpanResult } from "./replay/spans";
export { failureShapes, confirmedCauses, type FailureShape } from "./replay/shapes";
export { fixCheck, type FixCheck, type FixCheckOptions } from "./replay/fixcheck";
export { narrowAttribution } from "./replay/narrow";
export { buildCase, caseMarkdown, caseHtml, type CaseFile } from "./report/case";
export { applyEdit, interveneOn, spanSpec, type Change } from "./interventions";
// ---- capture: SDK adapters, gateway, remote ingest, OpenTelemetry import (docs/capture.md)
export { traceOpenAI, TracedOpenAI, type OpenAILike, type OpenAIToolCall } from "./adapters/openai";
export { traceAnthropic, TracedAnthropic, type AnthropicLike, type ToolUseBlock } from "./adapters/anthropic";
export { ConversationRecorder, openRun, runDir, type CaptureOptions, type OpenRunOptions, type RecordedRequest, type RecordedBlock } from "./adapters/shared";
export { CODECS, PLACEHOLDER, codecForPath, type Codec, type ApiName } from "./adapters/codecs";
export { rebuildRequest, withoutBlocks, EndpointError } from "./adapters/endpoint-replay";
export { endpointDecisionTest, type EndpointTestOptions } from "./replay/endpoint-test";
export { HttpSink, IngestError, type HttpSinkOptions } from "./sdk/httpsink";
export { startGateway, type Gateway, type GatewayOptions } from "./capture/gateway";
export { startCollector, INGEST_MARKER, type Collector, type CollectorOptions } from "./capture/server";
export { validateBatch, type StoredRun, type IngestVerdict, type RunHead } from "./capture/ingest";
export { AlertWatcher, webhookPayload, type WatchOptions, type WatchedAlert } from "./capture/watch";
export { importOtel, type OtelImportOptions } from "./importers/otel";
export { findEmails, globMatch } from "./analysis/scan";
export { safeText } from "./log/sanitize";
export { readLimits, MAX_JSON_DEPTH, type ReadLimits } from "./log/safefs";
