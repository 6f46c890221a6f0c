import type { Route } from '../router.ts';

export interface ViewContext {
  route: Route;
  /** Where the view draws. */
  container: HTMLElement;
  /** False once the user has moved on to another screen: a slow answer must not draw over it. */
  alive: () => boolean;
  announce: (message: string) => void;
}

export type View = (context: ViewContext) => Promise<void>;
