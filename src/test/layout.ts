/**
 * jsdom does no layout, so a virtualizer would render nothing. This gives every element a
 * fixed box (scroll containers 600 px tall, rows with data-index 50 px) and an element scrollTo
 * that moves scrollTop and fires scroll, as a browser would.
 */
export function stubLayout(): () => void {
  const proto = HTMLElement.prototype;
  const saved = ['clientHeight', 'clientWidth', 'offsetHeight', 'offsetWidth'].map(
    (name) => [name, Object.getOwnPropertyDescriptor(proto, name)] as const,
  );
  const rowOr = (element: HTMLElement, row: number, other: number) =>
    element.hasAttribute('data-index') ? row : other;
  Object.defineProperty(proto, 'clientHeight', {
    configurable: true,
    get(this: HTMLElement) {
      return rowOr(this, 50, 600);
    },
  });
  Object.defineProperty(proto, 'clientWidth', {
    configurable: true,
    get() {
      return 800;
    },
  });
  Object.defineProperty(proto, 'offsetHeight', {
    configurable: true,
    get(this: HTMLElement) {
      return rowOr(this, 50, 600);
    },
  });
  Object.defineProperty(proto, 'offsetWidth', {
    configurable: true,
    get() {
      return 800;
    },
  });
  const hadScrollTo = Object.getOwnPropertyDescriptor(Element.prototype, 'scrollTo');
  Object.defineProperty(Element.prototype, 'scrollTo', {
    configurable: true,
    writable: true,
    value(this: Element, options?: ScrollToOptions | number, y?: number) {
      const top = typeof options === 'number' ? (y ?? 0) : (options?.top ?? this.scrollTop);
      this.scrollTop = Math.max(0, top);
      this.dispatchEvent(new Event('scroll'));
    },
  });
  return () => {
    if (hadScrollTo) Object.defineProperty(Element.prototype, 'scrollTo', hadScrollTo);
    else delete (Element.prototype as unknown as Record<string, unknown>).scrollTo;
    for (const [name, descriptor] of saved) {
      if (descriptor) Object.defineProperty(proto, name, descriptor);
      else delete (proto as unknown as Record<string, unknown>)[name];
    }
  };
}
