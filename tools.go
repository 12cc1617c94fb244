//go:build tools

// Package main pins modules that the code is about to import, so go.mod stays stable while
// several parts are written at once.
package main

import (
	_ "github.com/charmbracelet/bubbles/help"
	_ "github.com/charmbracelet/bubbles/key"
	_ "github.com/charmbracelet/bubbles/spinner"
	_ "github.com/charmbracelet/bubbles/table"
	_ "github.com/charmbracelet/bubbles/textinput"
	_ "github.com/charmbracelet/bubbles/viewport"
	_ "github.com/charmbracelet/bubbletea"
	_ "github.com/charmbracelet/lipgloss"
	_ "github.com/charmbracelet/x/exp/golden"
	_ "github.com/charmbracelet/x/exp/teatest"
	_ "github.com/spf13/cobra"
	_ "k8s.io/api/apps/v1"
	_ "k8s.io/api/core/v1"
	_ "k8s.io/api/discovery/v1"
	_ "k8s.io/api/events/v1"
	_ "k8s.io/apimachinery/pkg/util/validation/field"
	_ "k8s.io/cli-runtime/pkg/genericclioptions"
	_ "k8s.io/cli-runtime/pkg/genericiooptions"
	_ "k8s.io/cli-runtime/pkg/printers"
	_ "k8s.io/client-go/informers"
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/client-go/tools/clientcmd"
	_ "k8s.io/client-go/tools/pager"
	_ "k8s.io/client-go/rest"
	_ "k8s.io/client-go/util/cert"
	_ "sigs.k8s.io/yaml"
	_ "github.com/sahilm/fuzzy"
	_ "golang.org/x/term"
)
