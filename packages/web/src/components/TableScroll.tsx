import { type ReactNode, useLayoutEffect, useRef, useState } from 'react';

/**
 * The box of a table wider than a phone's screen: it scrolls sideways instead of widening the
 * page. A keyboard must reach what it hides, so while it does scroll it is a named region in
 * the tab order (arrow keys scroll it once focused); while it does not, it adds no tab stop.
 */
export function TableScroll(props: { label: string; children: ReactNode }) {
  const box = useRef<HTMLDivElement>(null);
  const [scrolls, setScrolls] = useState(false);
  useLayoutEffect(() => {
    const element = box.current;
    if (!element) return;
    const measure = () => setScrolls(element.scrollWidth > element.clientWidth);
    measure();
    // The box narrows with the window; the table widens with its rows.
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    if (element.firstElementChild) observer.observe(element.firstElementChild);
    return () => observer.disconnect();
  }, []);
  return (
    <section
      ref={box}
      className="table-scroll"
      aria-label={props.label}
      tabIndex={scrolls ? 0 : undefined}
    >
      {props.children}
    </section>
  );
}
