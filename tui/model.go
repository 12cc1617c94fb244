package tui

import (
	"context"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/spinner"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/redact"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// state is the root model's explicit state.
type state int

const (
	stateLoading state = iota
	stateError
	stateReady
)

// screenID names the screen shown in the ready state.
type screenID int

const (
	screenWorkloads screenID = iota
	screenDiagnosis
	screenHelp
)

// screen is what every screen of the console implements. Update is per screen because each
// takes key messages only; the root model routes everything else.
type screen interface {
	Init() tea.Cmd
	SetSize(width, height int)
	View() string
	help.KeyMap
}

var (
	_ screen = (*workloadsScreen)(nil)
	_ screen = (*diagnosisScreen)(nil)
	_ screen = (*helpScreen)(nil)
)

// common is what every screen gets through its constructor: styles and keys.
type common struct {
	styles Styles
	keys   KeyMap
}

// liveStatus tracks a watch: when the last snapshot arrived and what went wrong since.
type liveStatus struct {
	watching  bool
	updatedAt time.Time
	err       error
	errAt     time.Time
}

// Model is the console's root model.
type Model struct {
	common
	ctx  context.Context
	opts Options
	now  func() time.Time

	width, height int
	state         state
	screen        screenID
	// back is the screen help returns to.
	back screenID

	// diagnose is the engine; tests swap in reports made by hand, and clear rediagnose (the
	// engine's incremental entry, for a watch's snapshots) with it.
	diagnose   func(*snapshot.Snapshot) *diagnose.Report
	rediagnose rediagnoseFn

	spinner  spinner.Model
	progress string
	// fitted is the body View fitted to the terminal last, and its lines.
	fitted struct {
		body  string
		width int
		lines []string
	}
	// reading is the read under way before the first picture: when it began and what it has
	// counted, for the progress line.
	reading readProgress
	// gen increases with every source change; messages of older generations are dropped.
	gen int
	// seq numbers loads; only the latest one's result is shown.
	seq, seqNext int
	source       snapshot.Source
	// switched is true once the source is not the first one (n switched namespace). It is a
	// flag, not a comparison of sources: a Source may be a value of an uncomparable type (a
	// dump.Source holds funcs), and comparing two of those panics.
	switched bool
	loadErr  error
	// refreshing is true while a refresh runs over data already shown.
	refreshing bool

	data *dataset
	live liveStatus
	// clock is the wall clock as of the last tick; View reads it instead of calling time.Now.
	clock       time.Time
	cancelWatch context.CancelFunc
	// cancelLoad abandons the load under way.
	cancelLoad context.CancelFunc

	workloads workloadsScreen
	diagnosis diagnosisScreen
	help      helpScreen

	nsPrompt    bool
	nsInput     textinput.Model
	toast       string
	toastExpiry time.Time
	// quitting is set once a key quit, so the keys after it in the same read are dropped.
	quitting bool
	// openContext is the context of the open diagnosis in a console over several.
	openContext string
	// fleetw is what the console knows of each context it follows, when it follows several.
	fleetw *fleetWatch
}

// New builds the root model. now is the wall clock (time.Now outside tests).
func New(ctx context.Context, opts Options, styles Styles, now func() time.Time) *Model {
	c := common{styles: styles, keys: DefaultKeyMap()}
	c.keys.Context.SetEnabled(opts.ReadFleet != nil || opts.WatchFleet != nil)
	red := redact.For(opts.ShowSecrets)
	sp := spinner.New(spinner.WithSpinner(spinner.Dot), spinner.WithStyle(styles.Title))
	ni := textinput.New()
	ni.Prompt = "namespace: "
	ni.CharLimit = 253
	ni.ShowSuggestions = true
	m := &Model{
		common:     c,
		ctx:        ctx,
		opts:       opts,
		now:        now,
		width:      80,
		height:     24,
		spinner:    sp,
		source:     opts.Source,
		clock:      now(),
		workloads:  newWorkloadsScreen(c),
		diagnosis:  newDiagnosisScreen(c),
		help:       newHelpScreen(c),
		nsInput:    ni,
		diagnose:   shownDiagnose(red),
		rediagnose: shownRediagnose(red),
	}
	m.diagnosis.redact = red
	m.reading.start = m.clock
	m.setSize(m.width, m.height)
	return m
}

// readProgress is what a read has counted so far.
type readProgress struct {
	start  time.Time
	what   string
	n      int
	counts map[string]int
	// diagnosing is true once a load has read everything and the engine runs.
	diagnosing bool
}

// Init starts the spinner and the first read: the watch's own when the source is live, so the
// cluster is read once, else a load.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.spinner.Tick, m.read())
}

// read starts reading the current source from scratch: its watch, or a load.
func (m *Model) read() tea.Cmd {
	m.reading = readProgress{start: m.now()}
	m.clock = m.reading.start
	if m.fleet() && len(m.opts.WatchFleet) > 0 {
		return m.startFleetWatch()
	}
	if w := m.watchFunc(); w != nil {
		return tea.Batch(m.startWatch(w), tick(m.gen))
	}
	return m.load()
}

func (m *Model) setSize(w, h int) {
	m.width, m.height = w, h
	bodyH := max(h-m.chromeHeight(), 1)
	m.workloads.SetSize(w, bodyH)
	m.diagnosis.SetSize(w, bodyH)
	m.help.SetSize(w, bodyH)
}

// chromeHeight is the header and footer around a screen's body.
func (m *Model) chromeHeight() int { return headerHeight + 1 }

// setData shows a new dataset, keeping the selection, scroll position and open diagnosis.
func (m *Model) setData(ds *dataset) {
	m.data = ds
	m.state = stateReady
	m.loadErr = nil
	if !ds.partial {
		m.progress = ""
	}
	m.workloads.SetRows(ds)
	if m.screen == screenDiagnosis || (m.screen == screenHelp && m.back == screenDiagnosis) {
		k := m.diagnosis.key
		if d := ds.part(m.openContext).report.Find(k.Kind, k.Namespace, k.Name); d != nil {
			m.diagnosis.Refresh(ds.part(m.openContext), d)
		} else if m.screen == screenDiagnosis {
			m.screen = screenWorkloads
		}
	}
}

func (m *Model) showToast(s string) tea.Cmd {
	m.toast = s
	m.toastExpiry = m.now().Add(3 * time.Second)
	return tea.Tick(3*time.Second, func(time.Time) tea.Msg { return toastExpiredMsg{} })
}

func (m *Model) stopLoad() {
	if m.cancelLoad != nil {
		m.cancelLoad()
		m.cancelLoad = nil
	}
}

func (m *Model) stopWatch() {
	if m.cancelWatch != nil {
		m.cancelWatch()
		m.cancelWatch = nil
	}
}
