/**
 * The app's controller and its current state, handed to every component through context. The root
 * (<App>) subscribes to the store once; components read a consistent snapshot with useApp().
 */
import { createContext } from "preact";
import { useContext, useLayoutEffect, useState } from "preact/hooks";
import type { AppState, Controller } from "../state";

export interface AppValue {
  ctl: Controller;
  state: AppState;
}

export const AppContext = createContext<AppValue | null>(null);

export function useApp(): AppValue {
  const v = useContext(AppContext);
  if (!v) throw new Error("useApp() outside <AppContext.Provider>");
  return v;
}

/**
 * The store's state, re-rendering the caller on every change (used by the root). Subscribed in a
 * layout effect, i.e. as the first render commits: the host's first answers (which follow in
 * microtasks) render at once instead of after the browser's next frame.
 */
export function useStoreState(ctl: Controller): AppState {
  const [state, setState] = useState(ctl.store.get());
  useLayoutEffect(() => {
    setState(ctl.store.get());
    return ctl.store.subscribe(() => setState(ctl.store.get()));
  }, [ctl]);
  return state;
}
