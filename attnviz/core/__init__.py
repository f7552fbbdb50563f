"""The maths: numpy/scipy only; knows nothing of scenarios, text or Streamlit."""
