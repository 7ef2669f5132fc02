// The console's single page: loads who is signed in, then shows the page the path names.
import { render } from 'preact';
import { App } from './app';
import './style.css';

const root = document.getElementById('app');
if (root) render(<App />, root);
