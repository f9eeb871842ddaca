/**
 * The app shell: the header (run picker, integrity, report theme switch), the screen tabs, the
 * screen itself and the record drawer.
 */
import type { JSX } from "preact";
import { useLayoutEffect } from "preact/hooks";
import type { Screen } from "../../core/protocol/messages";
import { ReportHost, type ThemeChoice } from "../host";
import { SCREEN_INFO } from "../screens";
import type { Controller } from "../state";
import { when } from "../labels";
import { AgentsScreen } from "./AgentsScreen";
import { AppContext, useApp, useStoreState } from "./context";
import { GraphScreen } from "./GraphScreen";
import { InfluenceScreen } from "./InfluenceScreen";
import { OverviewScreen } from "./OverviewScreen";
import { RecordDrawer } from "./RecordDrawer";
import { RunsScreen } from "./RunsScreen";
import { TimelineScreen } from "./TimelineScreen";
import { Button, Chip, Empty, Icon } from "./ui";
import { WhyScreen } from "./WhyScreen";
import { installBidiGuard } from "../bidi";

// wherever the investigator mounts (the extension, the report, tests): bidi controls in run content are shown, never applied
installBidiGuard();

export function App({ ctl }: { ctl: Controller }) {
  const state = useStoreState(ctl);
  return (
    <AppContext.Provider value={{ ctl, state }}>
      <Shell />
    </AppContext.Provider>
  );
}

function Shell() {
  const { state } = useApp();
  useReportTheme(state.caps.mode === "report" ? state.ui.theme : null);
  return (
    <div class={`app mode-${state.caps.mode}${state.ui.record !== null && state.ui.run && state.runs[state.ui.run] ? " has-drawer" : ""}`}>
      <Header />
      <Tabs />
      <main class="screen" id="screen" role="tabpanel" aria-labelledby={`tab-${state.ui.screen}`}>
        <ScreenBody />
      </main>
      <RecordDrawer />
    </div>
  );
}

function Header() {
  const { ctl, state } = useApp();
  const entries = ctl.entries();
  const run = state.ui.run;
  const summary = ctl.currentSummary();
  const onRun = (e: JSX.TargetedEvent<HTMLSelectElement>) => {
    const key = e.currentTarget.value;
    ctl.go(state.ui.screen === "runs" || state.ui.screen === "influence" ? "overview" : state.ui.screen, { run: key });
  };
  return (
    <header class="topbar">
      <div class="brand">
        <Icon name="type-hierarchy-sub" />
        <span>Causeway</span>
      </div>
      {entries.length > 0 && (
        <label class="runpick">
          <span class="sr-only">Run</span>
          <select value={run ?? ""} onChange={onRun} aria-label="Run">
            {!run && <option value="">Choose a run…</option>}
            {entries.map((e) => (
              <option value={e.key} key={e.key}>
                {e.summary.run_id}
              </option>
            ))}
          </select>
        </label>
      )}
      {summary && (
        <span class="topbar-status">
          {summary.status === "running" ? (
            <Chip tone="info" icon="pulse">
              recording
            </Chip>
          ) : summary.integrity === "ok" ? (
            <Chip tone="clear" icon="verified">
              log intact
            </Chip>
          ) : (
            <Chip tone="cause" icon="unverified">
              log failed verification
            </Chip>
          )}
        </span>
      )}
      <span class="topbar-spacer" />
      {state.caps.mode === "report" ? (
        <ReportBadge />
      ) : (
        <Button small icon="export" onClick={() => ctl.exportReport()} title="Write these runs as one HTML file">
          Export report
        </Button>
      )}
    </header>
  );
}

function ReportBadge() {
  const { ctl, state } = useApp();
  const generated = ctl.host instanceof ReportHost ? ctl.host.data.generated : null;
  return (
    <span class="report-badge">
      <Chip tone="none" icon="file-code" title="A static file: no server, no network">
        static report{generated ? ` \u00b7 ${when(generated)}` : ""}
      </Chip>
      <label class="theme-pick">
        <Icon name="color-mode" />
        <span class="sr-only">Theme</span>
        <select aria-label="Theme" value={state.ui.theme} onChange={(e) => ctl.setTheme(e.currentTarget.value as ThemeChoice)}>
          <option value="auto">System theme</option>
          <option value="light">Light</option>
          <option value="dark">Dark</option>
          <option value="hc">High contrast</option>
        </select>
      </label>
    </span>
  );
}

function Tabs() {
  const { ctl, state } = useApp();
  const onKeyDown = (e: JSX.TargetedKeyboardEvent<HTMLElement>) => {
    const i = SCREEN_INFO.findIndex((s) => s.id === state.ui.screen);
    const step: Record<string, number> = { ArrowRight: 1, ArrowLeft: -1 };
    let next: number | null = null;
    if (e.key in step) next = (i + step[e.key] + SCREEN_INFO.length) % SCREEN_INFO.length;
    else if (e.key === "Home") next = 0;
    else if (e.key === "End") next = SCREEN_INFO.length - 1;
    if (next === null) return;
    e.preventDefault();
    ctl.go(SCREEN_INFO[next].id);
    e.currentTarget.querySelector<HTMLElement>(`#tab-${SCREEN_INFO[next].id}`)?.focus();
  };
  return (
    <nav class="tabs" role="tablist" aria-label="Screens" onKeyDown={onKeyDown}>
      {SCREEN_INFO.map((s) => {
        const selected = s.id === state.ui.screen;
        return (
          <button
            type="button"
            role="tab"
            id={`tab-${s.id}`}
            key={s.id}
            class={`tab${selected ? " selected" : ""}`}
            aria-selected={selected}
            aria-controls="screen"
            tabIndex={selected ? 0 : -1}
            onClick={() => ctl.go(s.id)}
          >
            <Icon name={s.icon} />
            {s.label}
          </button>
        );
      })}
    </nav>
  );
}

const SCREENS: Record<Screen, () => JSX.Element> = {
  runs: RunsScreen,
  overview: OverviewScreen,
  why: WhyScreen,
  timeline: TimelineScreen,
  graph: GraphScreen,
  agents: AgentsScreen,
  influence: InfluenceScreen,
};

function ScreenBody() {
  const { ctl, state } = useApp();
  const info = SCREEN_INFO.find((s) => s.id === state.ui.screen) ?? SCREEN_INFO[0];
  if (info.perRun) {
    const run = state.ui.run;
    if (!run)
      return (
        <Empty icon="list-unordered">
          No run is selected.{" "}
          <Button small onClick={() => ctl.go("runs")}>
            Choose a run
          </Button>
        </Empty>
      );
    if (state.removed[run])
      return (
        <Empty icon="trash">
          This run was deleted.{" "}
          <Button small onClick={() => ctl.go("runs", { run: "" })}>
            Back to runs
          </Button>
        </Empty>
      );
    // the Graph screen draws from the run's graph part (the rest is read when another screen asks)
    if (!state.runs[run] && !(info.id === "graph" && state.graphs[run]))
      return (
        <Empty icon="loading">
          <span class="loading">Reading the run…</span>
        </Empty>
      );
  }
  const Body = SCREENS[info.id];
  return <Body />;
}

/**
 * In the static report: applies the theme switch (data-theme on <html>, VS Code's body classes).
 * A layout effect, so the theme is in place before any screen (the graph) reads its colours.
 */
function useReportTheme(choice: ThemeChoice | null) {
  useLayoutEffect(() => {
    if (!choice) return;
    const media = window.matchMedia?.("(prefers-color-scheme: dark)");
    const apply = () => {
      const root = document.documentElement;
      // "auto" follows the system: the stylesheet defines each theme once, under its data-theme
      const effective = choice === "auto" ? (media?.matches ? "dark" : "light") : choice;
      if (root.getAttribute("data-theme") !== effective) root.setAttribute("data-theme", effective);
      const want = effective === "light" ? "vscode-light" : effective === "dark" ? "vscode-dark" : "vscode-high-contrast";
      const body = document.body.classList;
      for (const c of ["vscode-light", "vscode-dark", "vscode-high-contrast"]) if (c !== want && body.contains(c)) body.remove(c);
      if (!body.contains(want)) body.add(want);
    };
    apply();
    media?.addEventListener?.("change", apply);
    return () => media?.removeEventListener?.("change", apply);
  }, [choice]);
}
