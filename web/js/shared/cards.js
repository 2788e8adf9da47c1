// A grid of cards grouped by tag prefix, with collapsible groups and lazy rendering: the view
// is told when a card comes near the viewport and only then fetches and draws it, so 500 tags
// cost 500 light placeholders, not 500 charts.
import { el, fmtInt } from './dom.js';

/** The group of a tag: the part before the first '/'; '' (shown as "Ungrouped") if none. */
export function groupOf(tag) {
  const i = tag.indexOf('/');
  return i > 0 ? tag.slice(0, i) : '';
}

export class CardGrid {
  /**
   * @param {HTMLElement} container
   * @param {{createCard: (key) => HTMLElement, onVisible: (key) => void, group?: (key) => string,
   *          label?: (group) => string}} opts  `label` names a group ("Ungrouped" for '')
   */
  constructor(container, { createCard, onVisible, group = groupOf, label = (name) => name || 'Ungrouped' }) {
    this.container = container;
    this.createCard = createCard;
    this.onVisible = onVisible;
    this.group = group;
    this.label = label;
    this.cards = new Map(); // key -> element
    this.groups = new Map(); // name -> {details, body, count}
    this.visible = new Set();
    this.collapsed = new Set();
    this.observer = new IntersectionObserver((entries) => this.#observe(entries), {
      rootMargin: '200px 0px',
    });
  }

  #observe(entries) {
    for (const entry of entries) {
      const key = entry.target.dataset.key;
      if (entry.isIntersecting) {
        if (!this.visible.has(key)) {
          this.visible.add(key);
          this.onVisible(key);
        }
      } else {
        this.visible.delete(key);
      }
    }
  }

  /** Show exactly `keys` (sorted by the caller), keeping existing cards' DOM (no flicker). */
  setKeys(keys) {
    const wanted = new Set(keys);
    for (const [key, card] of this.cards) {
      if (!wanted.has(key)) {
        this.observer.unobserve(card);
        card.remove();
        this.cards.delete(key);
        this.visible.delete(key);
      }
    }
    const byGroup = new Map();
    for (const key of keys) {
      const name = this.group(key);
      if (!byGroup.has(name)) byGroup.set(name, []);
      byGroup.get(name).push(key);
    }
    const groupNodes = [];
    for (const [name, groupKeys] of byGroup) {
      const g = this.#groupFor(name);
      g.count.textContent = `(${fmtInt(groupKeys.length)})`;
      const nodes = groupKeys.map((key) => this.#cardFor(key));
      if (!sameOrder(g.body.children, nodes)) g.body.replaceChildren(...nodes);
      groupNodes.push(g.details);
    }
    for (const [name, g] of this.groups) {
      if (!byGroup.has(name)) this.groups.delete(name);
    }
    if (!sameOrder(this.container.children, groupNodes)) this.container.replaceChildren(...groupNodes);
  }

  #groupFor(name) {
    let g = this.groups.get(name);
    if (g) return g;
    const count = el('span', { class: 'group-count' });
    const body = el('div', { class: 'cards' });
    const details = el(
      'details',
      { class: 'group', open: !this.collapsed.has(name), dataset: { group: name } },
      el('summary', {}, el('span', { class: 'group-name' }, this.label(name)), ' ', count),
      body,
    );
    details.addEventListener('toggle', () => {
      if (details.open) this.collapsed.delete(name);
      else this.collapsed.add(name);
    });
    g = { details, body, count };
    this.groups.set(name, g);
    return g;
  }

  #cardFor(key) {
    let card = this.cards.get(key);
    if (!card) {
      card = this.createCard(key);
      card.dataset.key = key;
      this.cards.set(key, card);
      this.observer.observe(card);
    }
    return card;
  }

  /** Keys of cards currently on (or near) the screen. */
  visibleKeys() {
    return [...this.visible].filter((k) => this.cards.has(k));
  }

  isVisible(key) {
    return this.visible.has(key);
  }

  card(key) {
    return this.cards.get(key);
  }

  destroy() {
    this.observer.disconnect();
    this.container.replaceChildren();
    this.cards.clear();
    this.groups.clear();
    this.visible.clear();
  }
}

function sameOrder(children, nodes) {
  if (children.length !== nodes.length) return false;
  for (let i = 0; i < nodes.length; i += 1) if (children[i] !== nodes[i]) return false;
  return true;
}
