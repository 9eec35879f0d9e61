"""Landing page (placeholder until the app issue lands)."""
import streamlit as st

st.set_page_config(page_title="Training planner", layout="wide")
st.title("Training planner")
st.write("Will this training run fit, how long will it take, what will it cost, and which limit binds?")
