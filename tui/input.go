package tui

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
)

// onKeys routes a key message as the keys a person typed, one at a time.
//
// One read of the terminal can hold several keys, and bubbletea v1 turns a read into as few
// messages as it can: "jj" or "/api" typed fast (or sent by tmux) is one KeyRunes message with
// every rune, a bracketed paste is one with Paste set, and an Esc followed by another key is
// that key with Alt ("\x1b\x1b" is alt+esc). No binding matches such a message whole, so it is
// split here, once, for every screen; a key that changes the screen (a "/" opening the filter)
// takes effect before the runes after it are routed.
func (m *Model) onKeys(msg tea.KeyMsg) tea.Cmd {
	var cmds []tea.Cmd
	for rest := &msg; rest != nil && !m.quitting; {
		var k tea.KeyMsg
		k, rest = m.nextKey(*rest)
		cmds = append(cmds, m.onKey(k))
	}
	return tea.Batch(cmds...)
}

// nextKey splits the first typed key off msg; rest is what remains of msg, or nil.
func (m *Model) nextKey(msg tea.KeyMsg) (first tea.KeyMsg, rest *tea.KeyMsg) {
	input := m.focusedInput()
	if msg.Alt && (input == nil || !bindsKey(input.KeyMap, msg)) {
		// The console binds no Alt keys, so an Alt here is an Esc typed just before the key.
		// A text input's own Alt keys (alt+backspace deletes a word) stay whole.
		k := msg
		k.Alt = false
		return tea.KeyMsg{Type: tea.KeyEsc}, &k
	}
	if msg.Type != tea.KeyRunes || len(msg.Runes) == 0 {
		return msg, nil
	}
	rs := msg.Runes
	if input != nil {
		// A text input takes the runes up to the first control character whole, so a long
		// paste is one edit; a newline in it is Enter, as typed.
		n := 0
		for n < len(rs) && !isControl(rs[n]) {
			n++
		}
		if n == len(rs) {
			return msg, nil
		}
		if n > 0 {
			k := msg
			k.Runes, msg.Runes = rs[:n], rs[n:]
			return k, &msg
		}
	} else if len(rs) == 1 && !msg.Paste {
		return msg, nil
	}
	// A paste is split too: Key.String wraps a paste in brackets, so even one pasted rune
	// matches no binding.
	first = typedKey(rs[0])
	if len(rs) == 1 {
		return first, nil
	}
	msg.Runes = rs[1:]
	return first, &msg
}

// focusedInput is the text input that has the keys, or nil; the conditions are onKey's.
func (m *Model) focusedInput() *textinput.Model {
	switch {
	case m.nsPrompt:
		return &m.nsInput
	case m.state != stateError && m.screen == screenWorkloads && m.workloads.filtering:
		return &m.workloads.filter
	}
	return nil
}

// typedKey is the key message a terminal sends when r is typed alone.
func typedKey(r rune) tea.KeyMsg {
	switch {
	case r == ' ':
		return tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{r}}
	case r == '\n':
		// A pasted line ends in a newline where a typed one ends in Enter's carriage return.
		return tea.KeyMsg{Type: tea.KeyEnter}
	case isControl(r):
		return tea.KeyMsg{Type: tea.KeyType(r)}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}}
}

func isControl(r rune) bool { return r < ' ' || r == 0x7f }

// bindsKey reports whether a text input acts on msg.
func bindsKey(km textinput.KeyMap, msg tea.KeyMsg) bool {
	return key.Matches(msg, km.CharacterForward, km.CharacterBackward, km.WordForward, km.WordBackward,
		km.DeleteWordBackward, km.DeleteWordForward, km.DeleteAfterCursor, km.DeleteBeforeCursor,
		km.DeleteCharacterBackward, km.DeleteCharacterForward, km.LineStart, km.LineEnd, km.Paste,
		km.AcceptSuggestion, km.NextSuggestion, km.PrevSuggestion)
}
