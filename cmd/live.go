package cmd

import "errors"

// openLive will open the cluster the kubeconfig flags name once the live source lands.
func openLive(*SourceOptions) (*openedSource, error) {
	return nil, errors.New("live clusters are not supported yet; use --dump PATH")
}
