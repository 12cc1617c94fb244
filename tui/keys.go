package tui

import (
	"github.com/charmbracelet/bubbles/key"
)

// KeyMap is the console's one set of key bindings; every screen matches keys against it with
// key.Matches and takes its footer help from it.
type KeyMap struct {
	Up, Down, Top, Bottom, PageUp, PageDown, Wheel key.Binding

	Enter, Filter, HideHealthy, Namespace, Context, Refresh key.Binding

	NextTab, PrevTab, Tabs, Left, Right, Sideways, Wrap, Copy, CopySummary, Back key.Binding

	Help, Quit key.Binding
}

// DefaultKeyMap returns the bindings, following k9s and less habits.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Top:      key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g/home", "top")),
		Bottom:   key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G/end", "bottom")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+b"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+f", " "), key.WithHelp("pgdn", "page down")),
		// Wheel is help text only: the mouse arrives as tea.MouseMsg, not as a key.
		Wheel: key.NewBinding(key.WithHelp("wheel", "scroll")),

		Enter:       key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "diagnose")),
		Filter:      key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		HideHealthy: key.NewBinding(key.WithKeys("h"), key.WithHelp("h", "hide/show healthy")),
		Namespace:   key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "namespace (live)")),
		Refresh:     key.NewBinding(key.WithKeys("r", "ctrl+r"), key.WithHelp("r", "refresh")),
		// Context is enabled only over several contexts; help leaves it out otherwise.
		Context: key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "next context"), key.WithDisabled()),

		NextTab: key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next tab")),
		PrevTab: key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous tab")),
		Tabs:    key.NewBinding(key.WithKeys("1", "2", "3", "4", "5", "6"), key.WithHelp("1-6", "go to tab")),
		// Sideways, as less scrolls: the arrows and vi's h/l move the Spec and Copies tabs and
		// unwrapped logs by half a screen. h hides healthy rows on the workloads screen only.
		Left:  key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/h", "scroll left")),
		Right: key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→/l", "scroll right")),
		// Sideways is Left and Right as one footer entry; keys are matched through them.
		Sideways: key.NewBinding(key.WithKeys("left", "right", "h", "l"), key.WithHelp("←/→", "scroll")),
		// w wraps logs, as in k9s.
		Wrap:        key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "wrap logs")),
		Copy:        key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy fix")),
		CopySummary: key.NewBinding(key.WithKeys("Y"), key.WithHelp("Y", "copy summary")),
		Back:        key.NewBinding(key.WithKeys("esc", "backspace"), key.WithHelp("esc", "back")),

		Help: key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit: key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Help, k.Quit} }

// FullHelp implements help.KeyMap: every key, in the groups of HelpGroups.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.Top, k.Bottom, k.PageUp, k.PageDown, k.Wheel},
		{k.Enter, k.Filter, k.HideHealthy, k.Namespace, k.Context, k.Refresh},
		{k.NextTab, k.PrevTab, k.Tabs, k.Left, k.Right, k.Wrap, k.Copy, k.CopySummary, k.Back},
		{k.Help, k.Quit},
	}
}

// HelpGroups names the groups of FullHelp, in order.
func (k KeyMap) HelpGroups() []string {
	return []string{"Move", "Workloads", "Diagnosis", "General"}
}
