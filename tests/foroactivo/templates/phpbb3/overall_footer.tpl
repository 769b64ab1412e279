<!-- follows Etana/template@3ca46e4257dea5e96ac85ce43f1c005d1c1b04fe src/prosilver/overall_footer_end.tpl (trimmed) -->
	</div>
</div>
<a id="bottom" name="bottom"></a>
</body>
</html>
